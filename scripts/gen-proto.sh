#!/usr/bin/env sh
# Regenerates packages/core/src/proto/gen/ from packages/core/proto/types.proto with buf and
# protoc-gen-es (both npm dev dependencies; buf runs offline). The output is committed and
# never edited by hand: change the .proto file and run this script instead.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
# buf finds the local plugin `protoc-gen-es` on PATH.
PATH="$root/node_modules/.bin:$PATH"
export PATH

cd "$root/packages/core/proto"
buf generate --template buf.gen.yaml
echo "generated $(cd "$root" && ls packages/core/src/proto/gen/*.ts)"
