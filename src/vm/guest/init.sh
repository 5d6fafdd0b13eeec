#!/usr/bin/busybox sh
# The guest's pid 1 (generated into every vm image; @MODULES@ and @COMMAND@ are filled in at build
# time). Mounts the kernel filesystems, loads the virtio network driver, brings up the user-mode
# network (10.0.2.15, gateway 10.0.2.2), starts the control agent on ttyS1 and the harness program,
# then waits forever: pid 1 must never exit. Everything lives in the initramfs (RAM), so a whole-VM
# snapshot holds the complete guest.
bb=/usr/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev
$bb mkdir -p /tmp
$bb mount -t tmpfs tmpfs /tmp
for m in @MODULES@; do $bb insmod "/lib/modules/@RELEASE@/$m" || echo "init: insmod $m failed" >/dev/ttyS0; done
$bb ip link set lo up
$bb ip link set eth0 up
$bb ip addr add 10.0.2.15/24 dev eth0
$bb ip route add default via 10.0.2.2
export PATH=/usr/bin:/bin HOME=/app HARNESS_PORT=@PORT@ PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8
cd /app
@PYTHON@ -B -s /hh/agent.py </dev/null >/dev/ttyS0 2>&1 &
@COMMAND@ </dev/null >/dev/ttyS0 2>&1 &
while true; do $bb sleep 3600; done
