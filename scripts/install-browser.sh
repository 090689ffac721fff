#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (test/browser/), never a browser download.
# Does nothing when /usr/bin/chromium exists; installs it with apt-get when we are root; otherwise
# says what to run. Never fails the caller: without chromium the browser tests skip, saying so.
set -u
if [ -x /usr/bin/chromium ]; then
  echo "install-browser: /usr/bin/chromium present"
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "install-browser: /usr/bin/chromium missing and not root; run: sudo apt-get install -y chromium"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: /usr/bin/chromium missing and no apt-get here; the browser tests will skip"
  exit 0
fi
echo "install-browser: installing Debian's chromium"
if apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; then
  echo "install-browser: chromium installed"
else
  echo "install-browser: installing chromium failed; the browser tests will skip"
fi
exit 0
