import { buildExampleApp } from './app';

buildExampleApp().synth();
