"""bench/vs_ns3_scaling.py reads the profile example's timings right."""

import unittest

import vs_ns3_scaling


class ParseProfile(unittest.TestCase):
    def test_best_time_in_any_unit(self):
        out = (
            "scaling-thin-100: 9.944119ms wall, end 20.161005s sim, 50284 events, 28655 link "
            "packets, 198 ns/event, drops DropCounts { loss_forward: 70 }\n"
            "scaling-thin-100: 2.9168s wall, end 20.161005s sim, 50284 events, 1 link packets\n"
            "scaling-thin-100: 950.5µs wall, end 20.161005s sim, 50284 events, 1 link packets\n"
        )
        best, events = vs_ns3_scaling.parse_profile(out)
        self.assertAlmostEqual(best, 950.5e-6)
        self.assertEqual(events, 50284)

    def test_no_timing_is_an_error(self):
        with self.assertRaises(SystemExit):
            vs_ns3_scaling.parse_profile("error: no such file\n")


if __name__ == "__main__":
    unittest.main()
