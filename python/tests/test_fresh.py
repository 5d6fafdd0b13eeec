"""The per-copy randomness helpers (harnesshost.fresh): every value is read from the kernel at the call,
so no two draws repeat, and the forms are those of uuid4 and random.random.
"""

from __future__ import annotations

import re
import unittest

from harnesshost import fresh_bytes, fresh_random, fresh_uuid

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


class FreshRandomness(unittest.TestCase):
    def test_fresh_uuid_is_a_version_4_uuid_and_never_repeats(self) -> None:
        drawn = [fresh_uuid() for _ in range(200)]
        for u in drawn:
            self.assertRegex(u, UUID4)
        self.assertEqual(len(set(drawn)), 200)

    def test_fresh_random_is_in_the_unit_interval_and_fresh_bytes_has_the_length_asked(self) -> None:
        for _ in range(200):
            r = fresh_random()
            self.assertGreaterEqual(r, 0.0)
            self.assertLess(r, 1.0)
        self.assertEqual(len(fresh_bytes(0)), 0)
        self.assertEqual(len(fresh_bytes(33)), 33)


if __name__ == "__main__":
    unittest.main()
