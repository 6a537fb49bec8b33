#!/usr/bin/env bash
# A Docker engine of the deployment tests' own: `start` runs dockerd on a socket and folders of its
# own (images kept between runs in $DEALS_DOCKER_ROOT, /var/tmp/deals-docker by default) and waits
# until it answers; `stop` ends it and puts the firewall rules, IP forwarding and bridge back as
# they were. Prints the reason and exits 1 when the engine cannot start.
set -euo pipefail
root=${DEALS_DOCKER_ROOT:-/var/tmp/deals-docker}
socket="$root/docker.sock"
mkdir -p "$root"

case "${1:-}" in
start)
  for tool in dockerd docker docker-compose debootstrap iptables-save; do
    command -v "$tool" >/dev/null || { echo "no $tool on PATH (Debian: apt-get install docker.io docker-compose debootstrap)"; exit 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "a Docker engine needs root here"; exit 1; }
  iptables-save >"$root/iptables.before"
  cat /proc/sys/net/ipv4/ip_forward >"$root/ip_forward.before"
  dockerd --data-root "$root/data" --exec-root "$root/exec" --pidfile "$root/dockerd.pid" \
    --host "unix://$socket" --storage-driver overlay2 >"$root/dockerd.log" 2>&1 &
  for _ in $(seq 1 100); do
    if DOCKER_HOST="unix://$socket" docker info >/dev/null 2>&1; then echo "unix://$socket"; exit 0; fi
    kill -0 $! 2>/dev/null || break
    sleep 0.2
  done
  echo "dockerd did not start: $(tail -3 "$root/dockerd.log" | tr '\n' ' ')"
  kill $! 2>/dev/null || true
  exit 1
  ;;
stop)
  if [ -s "$root/dockerd.pid" ]; then
    pid=$(cat "$root/dockerd.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  [ -f "$root/iptables.before" ] && iptables-restore <"$root/iptables.before" && rm -f "$root/iptables.before"
  [ -f "$root/ip_forward.before" ] && cat "$root/ip_forward.before" >/proc/sys/net/ipv4/ip_forward && rm -f "$root/ip_forward.before"
  ip link delete docker0 2>/dev/null || true
  umount "$root/exec/netns/default" 2>/dev/null || true
  ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac
