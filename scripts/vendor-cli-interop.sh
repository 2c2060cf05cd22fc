#!/usr/bin/env bash
# Runs the service vendor's own bash client test suite (embed-cli/test/run_all.sh of a checkout of the public
# openbridge/embedded-api repository) against `dpi emulator`, by hand. Not part of CI: the vendor repository carries
# no licence, so nothing of it is in this project; this script only points it at the emulator.
#
#   npx projen bundle
#   scripts/vendor-cli-interop.sh /path/to/embedded-api-checkout vendor|minimal
#
# What it does, without changing the checkout's code: writes the checkout's embed-cli/config.env (the emulator's
# refresh token), puts a `curl` wrapper first on PATH that rewrites the client's fixed https://*.api.openbridge.io
# hosts to the emulator's URL, sets API_ENDPOINT_BASE (which the client reads), starts the bundled emulator with the
# given read mode (rate limit off), loads the catalog data the suite assumes (product 70 with stages), runs the suite,
# prints the pass count and every failing test, and stops the emulator. The full output is kept in
# $VENDOR_CLI_LOG (default: a temporary file, printed at the end).
set -euo pipefail

if [[ $# -ne 2 || ! -d "$1/embed-cli" || ( "$2" != minimal && "$2" != vendor ) ]]; then
  echo "usage: $0 <embedded-api checkout (with embed-cli/)> <minimal|vendor>" >&2
  exit 2
fi
checkout="$(cd "$1" && pwd)"
mode="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="$root/assets/cli/dpi/index.js"
[[ -f "$cli" ]] || { echo "$cli is missing: run npx projen bundle first" >&2; exit 2; }
for tool in curl jq node; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 2; }
done

work="$(mktemp -d)"
log="${VENDOR_CLI_LOG:-$work/run.log}"
emu_pid=""
cleanup() {
  if [[ -n "$emu_pid" ]]; then
    kill "$emu_pid" 2>/dev/null || true
    wait "$emu_pid" 2>/dev/null || true
  fi
  if [[ -z "${VENDOR_CLI_LOG:-}" ]]; then cp "$log" "${TMPDIR:-/tmp}/vendor-cli-interop-$mode.log" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

node "$cli" emulator --port 0 --reads "$mode" --rate-limit off >"$work/emulator.out" 2>&1 &
emu_pid=$!
url=""
for _ in $(seq 1 150); do
  url="$(sed -n 's/^listening on //p' "$work/emulator.out" | head -n 1)"
  [[ -n "$url" ]] && break
  kill -0 "$emu_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n "$url" ]] || { echo "the emulator did not start:" >&2; cat "$work/emulator.out" >&2; exit 1; }

# Data the suite assumes exists in the account (stages of product 70); shapes and routes are the emulator's own.
curl -sf -X POST "$url/_emulator/fixtures" -H 'Content-Type: application/json' -d '{
  "products": [{"id": 70, "name": "Interop Source", "active": 1, "is_storage_product": 0, "remote_identity_type_id": null,
    "stages": [{"name": "interop_daily", "stage_id": 1000, "restricted_to": null}], "required_meta_fields": []}],
  "payloads": [{"id": "7001", "product": 70, "name": "interop_daily", "stage_id": 1000, "enabled": true}]
}' >/dev/null

real_curl="$(command -v curl)"
mkdir -p "$work/bin" "$work/cache"
cat >"$work/bin/curl" <<EOF
#!/usr/bin/env bash
# Rewrites https://<service>.api.openbridge.io/... to the emulator, then runs the real curl.
args=()
for a in "\$@"; do
  if [[ "\$a" =~ ^https://[A-Za-z0-9.-]+\\.api\\.openbridge\\.io(/.*)?\$ ]]; then a="$url\${BASH_REMATCH[1]}"; fi
  args+=("\$a")
done
exec "$real_curl" "\${args[@]}"
EOF
chmod +x "$work/bin/curl"

printf 'REFRESH_TOKEN="%s"\n' "emulator-refresh-token" >"$checkout/embed-cli/config.env"

set +e
(
  cd "$checkout/embed-cli"
  PATH="$work/bin:$PATH" API_ENDPOINT_BASE="$url" CACHE_DIR="$work/cache" SLEEP_DURATION=0 NO_COLOR=true \
    bash test/run_all.sh
) >"$log" 2>&1
status=$?
set -e

clean="$(sed 's/\x1b\[[0-9;]*m//g' "$log")"
echo "embed-cli against dpi emulator --reads $mode ($url):"
grep -E '^(Total Tests Run|Total Tests Passed|Total Tests Failed):' <<<"$clean" || true
failed="$(awk '/^Running [a-z_]+\.sh$/ {file=$2} /^Running test: / {name=substr($0, 15)} /Test failed/ {print "  FAILED " file ": " name}' <<<"$clean")"
[[ -n "$failed" ]] && echo "$failed"
echo "full output: ${VENDOR_CLI_LOG:-${TMPDIR:-/tmp}/vendor-cli-interop-$mode.log}"
exit "$status"
