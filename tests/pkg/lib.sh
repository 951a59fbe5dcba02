# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# Shared by the tests/pkg scripts (sourced). Layout of the output directory
# OUT (build/pkg by default), written by build-debs and read by the others:
#   OUT/src/siwx-<version>/      the staged tree the packages are built from
#   OUT/src/*.deb, *.changes     dpkg-buildpackage -b output
#   OUT/lintian.txt              lintian's report
#   OUT/rpm/                     rpmbuild's _topdir (build-rpms)
set -euo pipefail

pkg_die() { echo "FAIL: $*" >&2; exit 1; }
pkg_say() { echo "== $*"; }

# Debian package -> RPM package, and the role both play.
PKG_DEBS="siwx-dkms siwx-ibverbs-provider siwx-dev"
pkg_rpm_name() {
	case $1 in
	siwx-dkms) echo siwx-dkms ;;
	siwx-ibverbs-provider) echo siwx ;;
	siwx-dev) echo siwx-devel ;;
	*) pkg_die "unknown package $1" ;;
	esac
}

# pkg_installed PKG...: dpkg has any of them in some state (not just known).
pkg_installed() {
	dpkg-query -W -f='${db:Status-Status} ' "$@" 2>/dev/null |
		grep -Eq '(^| )(installed|config-files|half-installed|half-configured|unpacked|triggers-awaited|triggers-pending) '
}

# pkg_no_tests LOG: a package build under nocheck (log LOG) built and ran
# no test.
pkg_no_tests() {
	! grep -Eq 'siwx_(unit|provider_unit|wire_peer)_tests|tests passed' "$1"
}

pkg_version() { tr -d '[:space:]' < "$1/VERSION"; }

# The files a package must hold, as normalised paths (see pkg_normalise),
# computed from the staged source tree $1 and the version $2.
pkg_expected() {
	local tree=$1 ver=$2 pkg=$3 f
	case $pkg in
	siwx-dkms)
		local src=/usr/src/siwx-$ver
		{
			echo "$src/dkms.conf"
			echo "$src/Kbuild"
			echo "$src/VERSION"
			for f in "$tree"/kernel/*.c "$tree"/kernel/*.h; do
				echo "$src/${f##*/}"
			done
			for f in "$tree"/core/*.c; do
				echo "$src/core/${f##*/}"
			done
			(cd "$tree" && find include/siwx -type f) | sed "s|^|$src/|"
			echo "DOC/examples/siwx.conf"
			echo "DOC/examples/siwx-link@.service"
		} | sort
		;;
	siwx-ibverbs-provider)
		printf '%s\n' /etc/libibverbs.d/siwx.driver \
			LIBDIR/libibverbs/libsiwx-rdmav34.so | sort
		;;
	siwx-dev)
		echo /usr/include/infiniband/siwxdv.h
		;;
	esac
}

# Normalise a list of installed paths (stdin) so that a .deb's and an RPM's
# compare equal where only the distributions' conventions differ:
#  - the library directory: /usr/lib/<multiarch> (Debian) and /usr/lib64
#    (RPM %{_libdir}) both become LIBDIR;
#  - /usr/share/doc/<package>/ becomes DOC/ (the package names differ);
#  - dropped: what each distribution adds by itself, namely Debian's
#    /usr/share/doc/<pkg>/{copyright,changelog.gz} and RPM's
#    /usr/lib/.build-id/ links and /usr/share/licenses/.
pkg_normalise() {
	sed -E -e 's|^\./|/|' \
		-e 's|^/usr/lib/[a-z0-9_]+-linux-gnu[a-z0-9_]*/|LIBDIR/|' \
		-e 's|^/usr/lib64/|LIBDIR/|' \
		-e 's|^/usr/share/doc/[^/]+/|DOC/|' |
		grep -Ev '^(DOC/(copyright|changelog\.Debian\.gz|changelog\.gz)$|/usr/lib/\.build-id/|/usr/share/licenses/)' |
		sort
}

# Non-directory entries of a .deb, one path a line.
pkg_deb_files() {
	dpkg-deb --fsys-tarfile "$1" | tar -t --no-recursion -v -f - |
		awk '$1 !~ /^d/ { p = $6; for (i = 7; i <= NF; i++) p = p " " $i; sub(/ -> .*/, "", p); print p }'
}

# Non-directory entries of an .rpm.
pkg_rpm_files() {
	rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$1" 2>/dev/null |
		awk '$1 !~ /^d/ { print $2 }'
}
