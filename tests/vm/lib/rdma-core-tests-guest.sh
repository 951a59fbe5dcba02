# shellcheck shell=sh
# Runs in guest 1 of scenario siwx-rdma-core-tests (busybox sh):
#   [RDMA_CORE_TESTS_ARGS=...] sh /overlay/rdma-core-tests-guest.sh LIMIT KIND...
# unpacks the overlay's rdma-core-tests.tar (lib/rdma-core-tests-overlay)
# over /, then runs rdma-core's tests/run_tests.py once per KIND (siwx,
# rxe, siw) on that kind's device ($DEV_<kind>), at most LIMIT s each,
# verbose, between marker lines that the host's judge
# (tests/vm/rdma-core-tests/judge) splits the output by:
#   === rdma-core-tests begin KIND DEV
#   === rdma-core-tests end KIND DEV rc=N
# The suite's own status does not end the step (the host judges its
# results); only a guest that cannot run it does.
limit=$1
shift
fail() { echo "FAIL: $*"; exit 1; }
tar -xf /overlay/rdma-core-tests.tar -C / || fail "unpacking the tests"
# multiprocessing's semaphores (the rdma_cm tests' Barrier) live in /dev/shm
mkdir -p /dev/shm
mount -t tmpfs shm /dev/shm || fail "no /dev/shm"
export PATH="/usr/local/bin:$PATH" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
python3 -c 'import pyverbs.device as d; print("pyverbs devices:", [x.name.decode() for x in d.get_device_list()])' ||
	fail "pyverbs does not load"
for kind; do
	eval "dev=\$DEV_$kind ip=\$SERVER_IP_$kind"
	[ -n "$dev" ] || fail "no device of kind $kind"
	echo "=== rdma-core-tests begin $kind $dev"
	# What the suite finds of the device: its netdev through sysfs (the
	# rdma_cm tests need it), its port and GIDs.
	echo "sysfs netdev of $dev: $(ls "/sys/class/infiniband/$dev/device/net" 2>&1)"
	rdma link show "$dev/1"
	ibv_devinfo -v -d "$dev" | grep -E 'transport|link_layer|state:|GID\[' | sed 's/^[[:space:]]*/  /'
	t0=$(date +%s)
	# shellcheck disable=SC2086 # a list of arguments
	(cd /tmp && timeout "$limit" python3 /usr/share/siwx-vm/rdma-core-tests/run_tests.py --dev "$dev" -v $RDMA_CORE_TESTS_ARGS 2>&1)
	rc=$?
	echo "=== rdma-core-tests end $kind $dev rc=$rc time=$(($(date +%s) - t0))s"
	# a test that hung leaves its processes: not into the next device's run
	for p in $(pidof python3); do kill -9 "$p" 2>/dev/null; done
done
