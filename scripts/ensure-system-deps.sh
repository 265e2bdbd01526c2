#!/usr/bin/env bash
# Installs the system binaries the tests drive (decision B7): OpenSSH's ssh-keygen, ssh and
# sshd (openssh-server), openssl, sshpass and curl, and Debian's Chromium with its driver
# (the console's browser tests, decision N14). Tests never skip themselves when one
# is missing; this script is how a fresh machine gets them. Needs root (or sudo).
set -euo pipefail
need=()
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v sshpass >/dev/null 2>&1 || need+=(sshpass)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "Installing system packages: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
