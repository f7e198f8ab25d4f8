#!/usr/bin/env bash
# Headless Chromium from Debian's packages, for test/vouchers.test.ts (it loads the voucher HTML
# and takes a screenshot). Idempotent: does nothing when `chromium` is already installed. Run by
# `npm test` (its "pretest" script), so a clean clone and CI get it too.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo -n)
else
  echo "ensure-chromium: chromium is missing and this user cannot install it; run as root: apt-get install -y chromium" >&2
  exit 1
fi

echo "ensure-chromium: installing chromium from Debian's packages" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null
