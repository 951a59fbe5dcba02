# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# What the opt-in packages of patched third-party libraries (siwx-rsockets:
# rsockets/build-deb; siwx-libfabric: libfabric/build-deb) share: a .deb
# made from a staging root with dpkg-deb, not debian/rules, because each
# holds one file built from a pristine upstream release. Sourced; the
# caller defines die().

# deb_shlibs PKG FILE: the Depends of FILE's own shared libraries, as
# dh_shlibdeps would find them (dpkg-shlibdeps, in a scratch debian/).
deb_shlibs() {
	local pkg=$1 file=$2 tmp shlibs
	tmp=$(mktemp -d)
	mkdir -p "$tmp/debian"
	printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$pkg" "$pkg" >"$tmp/debian/control"
	shlibs=$(cd "$tmp" && dpkg-shlibdeps -O "$file" 2>"$tmp/log" |
		sed -n 's/^shlibs:Depends=//p') || {
		cat "$tmp/log" >&2
		rm -rf "$tmp"
		die "dpkg-shlibdeps failed on $file"
	}
	[ -n "$shlibs" ] || {
		cat "$tmp/log" >&2
		rm -rf "$tmp"
		die "dpkg-shlibdeps found no dependencies of $file"
	}
	rm -rf "$tmp"
	echo "$shlibs"
}

# deb_changelog STAGE PKG VERSION MAINTAINER TEXT: the package's
# changelog.gz, one entry dated $SOURCE_DATE_EPOCH (else the last commit's
# time: the same tree gives the same .deb).
deb_changelog() {
	local stage=$1 pkg=$2 ver=$3 maint=$4 text=$5 when
	when=${SOURCE_DATE_EPOCH:-$(git -C "$(dirname "${BASH_SOURCE[0]}")" log -1 --format=%ct 2>/dev/null || date +%s)}
	mkdir -p "$stage/usr/share/doc/$pkg"
	printf '%s (%s) unstable; urgency=medium\n\n  * %s\n\n -- %s  %s\n' \
		"$pkg" "$ver" "$text" "$maint" "$(date -R -d "@$when")" |
		gzip -9n >"$stage/usr/share/doc/$pkg/changelog.gz"
}

# deb_build STAGE OUTDIR PKG VERSION ARCH: md5sums and Installed-Size
# (substituted for @SIZE@ in DEBIAN/control), then OUTDIR/PKG_VERSION_ARCH.deb
# in place of any earlier PKG .deb there. Prints the .deb's path.
deb_build() {
	local stage=$1 out=$2 pkg=$3 ver=$4 arch=$5 size deb
	size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
	sed -i "s/@SIZE@/$size/" "$stage/DEBIAN/control"
	(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
	deb=$out/${pkg}_${ver}_$arch.deb
	rm -f "$out/${pkg}"_*.deb
	dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
	echo "$deb"
}
