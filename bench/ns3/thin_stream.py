#!/usr/bin/env python3
"""ns-3 half of benchmark (a): a 30-minute interactive thin stream.

Topology: two nodes joined by a 100 Mbit/s point-to-point link with 50 ms one-way delay
(100 ms RTT). Uniform 0.5 % packet loss in each direction: a RateErrorModel
(ERROR_UNIT_PACKET) on both receiving devices, so data segments, ACKs and the handshake can
all be lost. TCP NewReno, SACK on, Nagle off, MinRto 200 ms (Linux-like). The sender writes
120 bytes every 140 ms for 1800 s (12 858 writes) from a small C++ writer scheduled on the
simulator; the run is then allowed to drain for --drain seconds.

`--flows N` runs N such streams between the same two nodes (ports 5000…, starts spread over
the first 140 ms), for the scaling comparison of docs/performance/comparisons.md ("Against ns-3 at
scale"); `--bandwidth` sets the link's rate.

Prints one JSON line: wall_s is the wall time of Simulator::Run() only (time.perf_counter).
"""
import argparse
import json
import os
import sys
import time

t_import = time.perf_counter()
from nsglue import glue, ns, percentile  # noqa: E402

IMPORT_S = time.perf_counter() - t_import


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=1800.0, help="seconds of writes")
    ap.add_argument("--drain", type=float, default=10.0, help="seconds after the last write")
    ap.add_argument("--loss", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flows", type=int, default=1, help="thin streams over the link")
    ap.add_argument("--bandwidth", default="100Mbps", help="the link's rate (ns-3 DataRate)")
    args = ap.parse_args()

    t0 = time.perf_counter()
    ns.RngSeedManager.SetSeed(args.seed)
    ns.RngSeedManager.SetRun(1)

    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    ns.Config.SetDefault("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))

    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.bandwidth))
    p2p.SetChannelAttribute("Delay", ns.StringValue("50ms"))
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue("1000p"))
    devs = p2p.Install(nodes)

    ems = []
    for i in range(2):
        em = ns.CreateObject[ns.RateErrorModel]()
        em.SetAttribute("ErrorRate", ns.DoubleValue(args.loss))
        em.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        em.AssignStreams(100 + i)
        devs.Get(i).SetAttribute("ReceiveErrorModel", ns.PointerValue(em))
        glue.AttachCounters(devs.Get(i))
        ems.append(em)

    stack = ns.InternetStackHelper()
    stack.Install(nodes)
    addr = ns.Ipv4AddressHelper()
    addr.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    ifs = addr.Assign(devs)

    readers, writers = [], []
    for i in range(args.flows):
        port = 5000 + i
        reader = glue.ThinReader()
        reader.Listen(nodes.Get(1), port, 120)
        writer = glue.ThinWriter()
        remote = ns.InetSocketAddress(ifs.GetAddress(1), port).ConvertTo()
        start = ns.MicroSeconds(140_000 * i // args.flows)
        writer.Start(nodes.Get(0), remote, start, 120, ns.MilliSeconds(140),
                     ns.Seconds(args.duration))
        readers.append(reader)
        writers.append(writer)
    ns.Simulator.Stop(ns.Seconds(args.duration + args.drain))
    setup_s = time.perf_counter() - t0

    t1, c1 = time.perf_counter(), time.process_time()
    ns.Simulator.Run()
    wall_s, cpu_s = time.perf_counter() - t1, time.process_time() - c1

    events = int(ns.Simulator.GetEventCount())
    lat = []
    for w, r in zip(writers, readers):
        one = glue.Latencies(w, r)
        lat.extend(one[i] for i in range(one.size()))
    lat.sort()
    writes = sum(len(w.writeTimes) for w in writers)
    out = {
        "workload": "thin_stream",
        "simulator": "ns-3",
        "ns3_version": "3.44",
        "flows": args.flows,
        "wall_s": round(wall_s, 4),
        "cpu_s": round(cpu_s, 4),
        "setup_s": round(setup_s, 4),
        "import_s": round(IMPORT_S, 3),
        "sim_time_s": args.duration + args.drain,
        "events": events,
        "events_per_s": round(events / wall_s) if wall_s > 0 else None,
        "packets": int(glue.PhyTx()),
        "packets_lost": int(glue.PhyRxDrop()),
        "writes": writes,
        "failed_writes": sum(int(w.failed) for w in writers),
        "bytes_written": writes * 120,
        "bytes_delivered": sum(int(r.bytes) for r in readers),
        "data_segments_sent": sum(int(w.counters.tx.segments) for w in writers),
        "retransmissions": sum(int(w.counters.tx.retrans) for w in writers),
        "rto_events": sum(int(w.counters.rtos) for w in writers),
        "app_latency_ms": {
            "count": len(lat),
            "mean": round(sum(lat) / len(lat), 3) if lat else None,
            "p50": percentile(lat, 0.50),
            "p90": percentile(lat, 0.90),
            "p99": percentile(lat, 0.99),
            "p999": percentile(lat, 0.999),
            "max": lat[-1] if lat else None,
        },
    }
    ns.Simulator.Destroy()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: destroying cppyy-held ns-3 objects after
    # Simulator::Destroy() can segfault at exit.
    os._exit(rc)
