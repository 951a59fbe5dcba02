# shellcheck shell=sh
# Runs in guest 1 of scenario siwx-rdma-core-tests (busybox sh):
#   [RDMA_CORE_TESTS_ARGS=...] sh /overlay/rdma-core-tests-guest.sh LIMIT KIND...
# unpacks the overlay's rdma-core-tests.tar (lib/rdma-core-tests-overlay)
# over /, then runs rdma-core's tests/run_tests.py once per KIND (siwx,
# rxe, siw) on that kind's device ($DEV_<kind>), at most LIMIT s each,
# verbose, between marker lines that the host's judge
# (tests/vm/rdma-core-tests/judge) splits the output by:
#   === rdma-core-tests begin KIND DEV
#   === rdma-core-tests resume KIND DEV after TEST-ID rc=N   (a crash)
#   === rdma-core-tests end KIND DEV rc=N time=Ts
# The suite's own status does not end the step (the host judges its
# results); only a guest that cannot run it does.
limit=$1
shift
fail() { echo "FAIL: $*"; exit 1; }
tar -xf /overlay/rdma-core-tests.tar -C / || fail "unpacking the tests"
# multiprocessing's semaphores (the rdma_cm tests' Barrier) live in /dev/shm
mkdir -p /dev/shm
mount -t tmpfs shm /dev/shm || fail "no /dev/shm"
# No colours (Python 3.13's tracebacks, 3.14's unittest): the judge reads
# plain text.
export PATH="/usr/local/bin:$PATH" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
	PYTHON_COLORS=0 NO_COLOR=1
python3 -c 'import pyverbs.device as d; print("pyverbs devices:", [x.name.decode() for x in d.get_device_list()])' ||
	fail "pyverbs does not load"
suite=/usr/share/siwx-vm/rdma-core-tests/run_tests.py
for kind; do
	eval "dev=\$DEV_$kind"
	[ -n "$dev" ] || fail "no device of kind $kind"
	# iWARP GIDs are the MAC and ten zero octets, and the suite passes
	# over a GID whose last eight octets are zero when it looks for a
	# usable port by itself: naming the GID index runs the tests.
	gid=
	case $kind in siwx | siw) [ "${RDMA_CORE_TESTS_GID:-0}" = none ] || gid="--gid ${RDMA_CORE_TESTS_GID:-0}" ;; esac
	echo "=== rdma-core-tests begin $kind $dev"
	# What the suite finds of the device: its place in sysfs and netdev
	# through it (rdma-core 44's rdma_cm tests need that), its port, GIDs.
	echo "sysfs: $(readlink -f "/sys/class/infiniband/$dev"); netdev through it: $(ls "/sys/class/infiniband/$dev/device/net" 2>&1)"
	rdma link show "$dev/1"
	echo "GID 0: $(cat "/sys/class/infiniband/$dev/ports/1/gids/0")"
	ibv_devinfo -v -d "$dev" | grep -E 'transport|link_layer|vendor_id|state:' | sed 's/^[[:space:]]*/  /'
	echo "run_tests.py --dev $dev -v $gid $RDMA_CORE_TESTS_ARGS"
	t0=$(date +%s)
	names=
	resumed=0
	while :; do
		left=$((limit - $(date +%s) + t0))
		[ $left -gt 0 ] || { rc=124; break; }
		# shellcheck disable=SC2086 # lists of arguments
		(cd /tmp && timeout "$left" python3 "$suite" --dev "$dev" -v $gid $RDMA_CORE_TESTS_ARGS $names 2>&1
			echo $? >/tmp/run.rc) | tee /tmp/run.out
		rc=$(cat /tmp/run.rc)
		# A run that a signal ended has no summary (rdma-core 56.1's
		# suite dies of a segmentation fault on rxe, in pyverbs'
		# cleanup of an earlier test's objects): the rest of the tests
		# run again after the test it died in, up to 5 times; the
		# judge counts that test as an error.
		if [ "$rc" -lt 128 ] || [ $resumed -ge 5 ] || grep -Eq '^Ran [0-9]+ tests? in' /tmp/run.out; then
			break
		fi
		last=$(sed -n 's/^test[A-Za-z0-9_]* (\(tests\.[A-Za-z0-9_.]*\)).*/\1/p' /tmp/run.out | tail -n 1)
		names=$(python3 "$suite" --list-tests 2>/dev/null | sed -n "/^$last\$/,\$p" | sed '1d; s/^tests\.//' | tr '\n' ' ')
		if [ -z "$last" ] || [ -z "$names" ]; then
			break
		fi
		echo "=== rdma-core-tests resume $kind $dev after $last rc=$rc"
		resumed=$((resumed + 1))
	done
	echo "=== rdma-core-tests end $kind $dev rc=$rc time=$(($(date +%s) - t0))s"
	# a test that hung leaves its processes: not into the next device's run
	for p in $(pidof python3); do kill -9 "$p" 2>/dev/null; done
done
