#!/bin/sh
# The runtime image's install step: the Dockerfile RUNs it, and
# test/e2e/production-install.test.ts runs it outside Docker, so that what the
# image does is what the test checks.
#
#   install-runtime.sh PACKAGE.tgz PACKAGE-LOCK.json APP_DIR COMPONENTS_DIR
#
# Unpacks the packed project (`npm pack`: package.json's `files` decide what is
# in it) into APP_DIR, installs its production dependencies exactly as the
# lockfile pins them, and moves the bundled examples to COMPONENTS_DIR, the
# repository rt serves when nothing else is mounted there.
set -eu

if [ "$#" -ne 4 ]; then
  echo "usage: $0 PACKAGE.tgz PACKAGE-LOCK.json APP_DIR COMPONENTS_DIR" >&2
  exit 2
fi
tarball=$1
lockfile=$2
app=$3
components=$4

mkdir -p "$app" "$components"
tar -xzf "$tarball" -C "$app" --strip-components=1
# npm pack leaves the lockfile out; npm ci needs it to install the pinned versions.
cp "$lockfile" "$app/package-lock.json"
cd "$app"
# --ignore-scripts: `prepare` would run tsc, a dev dependency; the package holds the compiled dist/.
npm ci --omit=dev --ignore-scripts --no-audit --no-fund
mv examples/build/* "$components"/
rmdir examples/build examples
