"""The guest control agent: the one process in the guest besides the harness node. It reads commands
from the second serial port (/dev/ttyS1, a unix socket on the host) and answers each on one line.

  reseed UNIX_NS HEX  ->  reseeded UNIX_NS
      Sets CLOCK_REALTIME to UNIX_NS, adds the HEX bytes to the kernel entropy pool (credited) and
      forces the kernel CRNG to reseed, so os.urandom/getrandom in every restored or forked copy of
      a snapshot diverge at once and the wall clock is the host's again. The monotonic clock is not
      touched: it continues from the snapshot.

  probe  ->  probe UNIX_NS HEX
      The guest's wall clock and 16 bytes from os.urandom (tests check that copies diverge).

Stdlib only; runs as root (pid 1's child) so it may set the clock and reseed.
"""
import fcntl
import os
import struct
import termios
import time
import tty

RNDADDENTROPY = 0x40085203
RNDRESEEDCRNG = 0x5207


def reseed(unix_ns, seed):
    time.clock_settime_ns(time.CLOCK_REALTIME, unix_ns)
    fd = os.open("/dev/urandom", os.O_WRONLY)
    try:
        fcntl.ioctl(fd, RNDADDENTROPY, struct.pack("ii", len(seed) * 8, len(seed)) + seed)
        fcntl.ioctl(fd, RNDRESEEDCRNG)
    finally:
        os.close(fd)


def main():
    fd = os.open("/dev/ttyS1", os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd, termios.TCSANOW)
    buf = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            time.sleep(0.05)
            continue
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            words = line.decode("ascii", "replace").split()
            if len(words) == 3 and words[0] == "reseed":
                try:
                    reseed(int(words[1]), bytes.fromhex(words[2]))
                    answer = f"reseeded {words[1]}"
                except (ValueError, OSError) as err:
                    answer = f"error {err}"
            elif words == ["probe"]:
                answer = f"probe {time.time_ns()} {os.urandom(16).hex()}"
            else:
                answer = "error unknown command"
            os.write(fd, (answer + "\n").encode("ascii"))


main()
