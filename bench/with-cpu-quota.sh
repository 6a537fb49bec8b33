#!/bin/sh
# Runs a command with this machine's CPU held to a quota: by default 1 CPU's worth of time across
# both cores (a cgroup v1 `cpu` controller, CFS quota per 2 ms period), to see how a change fares
# when the machine is slow. Needs root and the cgroup v1 cpu controller at /sys/fs/cgroup/cpu.
#
#   bench/with-cpu-quota.sh node dist/bench/run-all.js --only=purchases
#   CPU_QUOTA=1.5 bench/with-cpu-quota.sh node dist/bench/purchases.compare.js <A> <B>
#
# Everything the command starts (the API, autocannon's process) shares the quota; kernel threads
# (the disk's journal, writeback) do not. What it imitates is less CPU time, not slower cores: a
# commit's latency changes little, so the event store's raw append rate stays near its usual figure.
# The group (deals-bench-quota) is left in place and reused by the next run; CPU_QUOTA is at least
# 0.5 (the kernel takes no quota under 1 ms a period).
set -eu
controller=/sys/fs/cgroup/cpu
group="$controller/deals-bench-quota"
[ -d "$controller" ] || { echo "no cgroup v1 cpu controller at $controller" >&2; exit 1; }
mkdir -p "$group"
period=2000
quota=$(awk -v cpus="${CPU_QUOTA:-1}" -v period="$period" 'BEGIN { printf "%d", cpus * period }')
[ "$quota" -ge 1000 ] || { echo "CPU_QUOTA must be at least 0.5 (got ${CPU_QUOTA:-1})" >&2; exit 1; }
echo "$period" > "$group/cpu.cfs_period_us"
echo "$quota" > "$group/cpu.cfs_quota_us"
echo $$ > "$group/cgroup.procs"
echo "(CPU quota: ${CPU_QUOTA:-1} CPU over both cores, ${quota} us every ${period} us)" >&2
exec "$@"
