#!/usr/bin/env bash
set -euo pipefail

APP_DIR="/srv/app"
RELEASE="$(date +%Y%m%d%H%M%S)"

echo "==> building release ${RELEASE}"
git fetch --quiet origin main
git worktree add "${APP_DIR}/releases/${RELEASE}" origin/main
cd "${APP_DIR}/releases/${RELEASE}"
python3 -m venv .venv && .venv/bin/pip install -q -r requirements.txt

for svc in web worker scheduler; do
  systemctl stop "app-${svc}.service" || true
done
ln -sfn "${APP_DIR}/releases/${RELEASE}" "${APP_DIR}/current"
for svc in web worker scheduler; do
  systemctl start "app-${svc}.service"
done
ls -1dt "${APP_DIR}"/releases/* | tail -n +6 | xargs -r rm -rf
