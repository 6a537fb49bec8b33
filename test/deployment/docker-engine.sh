#!/usr/bin/env bash
# A Docker engine of the deployment tests' own: `start` runs dockerd on a socket and folders of its
# own (images kept between runs in $DEALS_DOCKER_ROOT, /var/tmp/deals-docker by default) and waits
# until it answers; `stop` ends it and takes out the firewall rules, IP forwarding and bridge it added. Prints the reason and exits 1 when the engine cannot start.
set -euo pipefail
root=${DEALS_DOCKER_ROOT:-/var/tmp/deals-docker}
socket="$root/docker.sock"
mkdir -p "$root"

# The dockerd of an earlier run, if it still runs (the pid file names a live dockerd).
running_pid() {
  local pid
  pid=$(cat "$root/dockerd.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] && echo "$pid"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$root/dockerd.pid"
  umount "$root/exec/netns/default" 2>/dev/null || true
  [ -f "$root/before" ] || return 0
  # Docker's chains, the rules that jump to them and those of its bridges, in the tables it writes to.
  local table chain
  for table in filter nat; do
    { iptables -t "$table" -S | grep -E -- '-j DOCKER|DOCKER-|docker0|br-[0-9a-f]{12}' | grep '^-A' | sed 's/^-A/-D/' || true; } |
      while read -r rule; do eval "iptables -t $table $rule"; done
    for chain in $(iptables -t "$table" -S | awk '$1 == "-N" && $2 ~ /^DOCKER/ { print $2 }'); do
      iptables -t "$table" -F "$chain"
      iptables -t "$table" -X "$chain"
    done
  done
  # shellcheck disable=SC1091
  . "$root/before"
  iptables -P FORWARD "$forward_policy"
  echo "$ip_forward" >/proc/sys/net/ipv4/ip_forward
  if [ "$bridge_existed" = no ]; then ip link delete docker0 2>/dev/null || true; fi
  rm -f "$root/before"
}

case "${1:-}" in
start)
  for tool in dockerd docker docker-compose debootstrap iptables; do
    command -v "$tool" >/dev/null || { echo "no $tool on PATH (Debian: apt-get install docker.io docker-compose debootstrap)"; exit 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "a Docker engine needs root here"; exit 1; }
  stop # an earlier run's, cut short
  forward_policy=$(iptables -S FORWARD | awk '$1 == "-P" { print $3 }')
  bridge_existed=$(ip link show docker0 >/dev/null 2>&1 && echo yes || echo no)
  printf 'forward_policy=%s\nip_forward=%s\nbridge_existed=%s\n' "${forward_policy:-ACCEPT}" \
    "$(cat /proc/sys/net/ipv4/ip_forward)" "$bridge_existed" >"$root/before"
  dockerd --data-root "$root/data" --exec-root "$root/exec" --pidfile "$root/dockerd.pid" \
    --host "unix://$socket" --storage-driver overlay2 >"$root/dockerd.log" 2>&1 &
  for _ in $(seq 1 100); do
    if DOCKER_HOST="unix://$socket" docker info >/dev/null 2>&1; then echo "unix://$socket"; exit 0; fi
    kill -0 $! 2>/dev/null || break
    sleep 0.2
  done
  echo "dockerd did not start: $(tail -3 "$root/dockerd.log" | tr '\n' ' ')"
  stop
  exit 1
  ;;
stop) stop ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac
