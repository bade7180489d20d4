#!/usr/bin/env bash
# Builds a local stand-in for the Dockerfile's base image where no image registry can be reached:
# Debian bookworm (minbase) from the distribution's packages, this machine's Node.js (binary, npm
# and headers, laid out as the official image has them) and a uid-1000 `node` user, tagged with the
# base image's name so that `podman build --pull=never` uses it. Needs mmdebstrap and podman (root).
# Skips the work when the tag already exists; --force rebuilds.
set -euo pipefail
tag="${STAND_IN_TAG:-docker.io/library/node:20-bookworm-slim}"
if [ "${1:-}" != "--force" ] && podman image exists "$tag"; then
  echo "stand-in base: $tag already present"
  exit 0
fi
node_bin="$(command -v node)"
prefix="$(dirname "$(dirname "$(readlink -f "$node_bin")")")"
major="$("$node_bin" -p 'process.versions.node.split(".")[0]')"
if [ "$major" != "20" ]; then
  echo "stand-in base: this machine's Node.js is $("$node_bin" -v), the image wants 20" >&2
  exit 1
fi
for need in "$prefix/include/node/node.h" "$prefix/lib/node_modules/npm/bin/npm-cli.js"; do
  [ -e "$need" ] || { echo "stand-in base: $need is missing (Node's headers and npm are copied in)" >&2; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Node's headers go where the official image has them, so a build sets npm's nodedir to /usr/local.
hook="mkdir -p \"\$1/usr/local/bin\" \"\$1/usr/local/include\" \"\$1/usr/local/lib/node_modules\" \
  && cp \"$node_bin\" \"\$1/usr/local/bin/node\" \
  && cp -a \"$prefix/include/node\" \"\$1/usr/local/include/\" \
  && cp -a \"$prefix/lib/node_modules/npm\" \"\$1/usr/local/lib/node_modules/\" \
  && ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\" \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\" \
  && chroot \"\$1\" groupadd --gid 1000 node \
  && chroot \"\$1\" useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
  && rm -rf \"\$1\"/var/cache/apt/* \"\$1\"/var/lib/apt/lists/*"
mmdebstrap --quiet --variant=minbase --include=ca-certificates \
  --customize-hook="$hook" bookworm "$work/rootfs.tar"
podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$("$node_bin" -p process.versions.node)" \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$tag"
echo "stand-in base: built $tag"
