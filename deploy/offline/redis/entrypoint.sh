#!/bin/sh
# As the official image does: no protected mode, which would refuse the other containers (no password set).
if [ "$1" = redis-server ]; then
  shift
  exec redis-server --protected-mode no --bind '* -::*' "$@"
fi
exec "$@"
