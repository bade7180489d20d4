#!/bin/sh
# node-headers.sh FROM TO: copies Node's headers (FROM/include/node) to TO/include/node with
# node::ObjectWrap as it was before Node 24.19, for compiling better-sqlite3 12 from source
# (npm_config_nodedir=TO). Since 24.19 (and in 26) ObjectWrap's header registers an environment
# cleanup hook per object and removes it in its destructor; a statement garbage-collected outside
# a JavaScript context then aborts the process ("Assertion failed: (env) != nullptr", nodejs/node
# issue 65446). better-sqlite3's prebuilt binaries predate that header; version 13 drops ObjectWrap
# but needs Node 22. Without the hook, a wrapped object is freed by the garbage collector alone, as
# on every Node before 24.19. Headers without the hook (Node 20) are copied unchanged.
set -eu
from="$1"
to="$2"
header="$to/include/node/node_object_wrap.h"
mkdir -p "$to/include"
cp -a "$from/include/node" "$to/include/"
sed -i '/^ *\(Add\|Remove\)CleanupHook();$/d' "$header"
if grep -q 'CleanupHook();' "$header"; then
  echo "node-headers: $header still calls a cleanup hook: its layout changed, review this script" >&2
  exit 1
fi
