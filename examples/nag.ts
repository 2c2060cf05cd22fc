import { IPolicyValidationContext, IPolicyValidationPlugin, PolicyValidationPluginReport } from 'aws-cdk-lib';
import { AwsSolutionsChecks, NagPack } from 'cdk-nag';
import { IConstruct } from 'constructs';

/**
 * Runs a cdk-nag 3 pack as a CDK policy validation plugin.
 *
 * cdk-nag 3's own `validate()` needs `appConstruct` on the validation context,
 * which aws-cdk-lib 2.257 does not provide yet; this adapter hands the pack the
 * app's construct tree through `validateScope()` (the entry point cdk-nag
 * documents for that case). Register it with
 * `Validations.of(app).addPlugins(new NagPlugin(app))`.
 */
export class NagPlugin implements IPolicyValidationPlugin {
  public readonly name: string;

  constructor(private readonly app: IConstruct, private readonly pack: NagPack = new AwsSolutionsChecks()) {
    this.name = pack.readPackName || 'cdk-nag';
  }

  public validate(_context: IPolicyValidationContext): PolicyValidationPluginReport {
    return this.pack.validateScope(this.app);
  }
}
