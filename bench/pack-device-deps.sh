#!/usr/bin/env bash
# Packs what a bare lent GPU machine lacks for the test suite: Criterion's headers and its shared
# libraries with the non-system libraries they load (the machine cannot download anything).
# Run here, then carry the folder and point device-check.sh at it:
#
#   bench/pack-device-deps.sh .devdeps          (add /.devdeps/ to .git/info/exclude)
#   run: carry [".devdeps"], command "CONVND_DEVICE_DEPS=.devdeps bench/device-check.sh"
#
# The libraries come from this machine's Debian; they run where the glibc is at least as new.
set -euo pipefail
dest=${1:-.devdeps}
mkdir -p "$dest/include" "$dest/lib"
cp -r /usr/include/criterion "$dest/include/"
[ -d /usr/include/boxfort ] && cp -r /usr/include/boxfort "$dest/include/"
crit=$(ls /usr/lib/x86_64-linux-gnu/libcriterion.so.* | head -1)
cp -L "$crit" "$dest/lib/"
ln -sf "$(basename "$crit")" "$dest/lib/libcriterion.so"
# the libraries Criterion loads, except the C runtime every machine has
ldd "$crit" | awk '/=> \//{print $3}' |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$dest/lib/"; done
du -sh "$dest"
