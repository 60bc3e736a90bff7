#!/usr/bin/env python3
"""ns-3 half of benchmark (b): 24 CBR + 24 bulk TCP flows over a 25 Mbit/s dumbbell.

Topology (PointToPointDumbbellHelper): 48 senders -- 10 Mbit/s, 2.5 ms -- router --
25 Mbit/s, 20 ms -- router -- 10 Mbit/s, 2.5 ms -- 48 receivers, i.e. 50 ms RTT of
propagation. The default fq_codel queue discs are removed; the bottleneck (both directions)
gets a drop-tail FifoQueueDisc of 156 packets (about one BDP of 1000-byte packets) in front
of a 1-packet device queue. Access links have no queue disc and 1000-packet device queues,
so that drops happen at the bottleneck only.

TCP NewReno, SACK on, Nagle off, MinRto 200 ms, SegmentSize (MSS) 1000. Flows 0-23: an
OnOffApplication that is always on, 300 kbit/s in 1000-byte writes (CBR over TCP); flows
24-47: BulkSendApplication (unbounded, 1000-byte writes). Flow i starts at i*10 ms; all
applications stop at 100 s and so does the simulation.

Prints one JSON line: wall_s is the wall time of Simulator::Run() only (time.perf_counter).
"""
import argparse
import json
import os
import sys
import time

t_import = time.perf_counter()
from nsglue import glue, ns  # noqa: E402

IMPORT_S = time.perf_counter() - t_import


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=100.0)
    ap.add_argument("--cbr", type=int, default=24)
    ap.add_argument("--bulk", type=int, default=24)
    ap.add_argument("--queue", type=int, default=156, help="bottleneck queue, packets")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n = args.cbr + args.bulk

    t0 = time.perf_counter()
    ns.RngSeedManager.SetSeed(args.seed)
    ns.RngSeedManager.SetRun(1)

    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    ns.Config.SetDefault("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1000))

    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue("10Mbps"))
    access.SetChannelAttribute("Delay", ns.StringValue("2.5ms"))
    access.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue("1000p"))
    bottleneck = ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue("25Mbps"))
    bottleneck.SetChannelAttribute("Delay", ns.StringValue("20ms"))
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue("1p"))

    db = ns.PointToPointDumbbellHelper(n, access, n, access, bottleneck)
    db.InstallStack(ns.InternetStackHelper())
    db.AssignIpv4Addresses(
        ns.Ipv4AddressHelper(ns.Ipv4Address("10.1.0.0"), ns.Ipv4Mask("255.255.255.0")),
        ns.Ipv4AddressHelper(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.0")),
        ns.Ipv4AddressHelper(ns.Ipv4Address("10.3.0.0"), ns.Ipv4Mask("255.255.255.0")),
    )
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    glue.UninstallAllQueueDiscs()
    assert glue.InstallBottleneckFifo(db.GetLeft(), db.GetRight(), args.queue) == 2

    # Count packet transmissions on every hop and drops at the bottleneck queues.
    for node_idx in range(ns.NodeList.GetNNodes()):
        node = ns.NodeList.GetNode(node_idx)
        for i in range(node.GetNDevices()):
            glue.AttachCounters(node.GetDevice(i))

    stop = ns.Seconds(args.duration)
    port = 9000
    sinks = []
    for i in range(n):
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_apps = sink_helper.Install(db.GetRight(i))
        sink_apps.Start(ns.Seconds(0.0))
        sink_apps.Stop(stop)
        sinks.append(sink_apps.Get(0))

        remote = ns.InetSocketAddress(db.GetRightIpv4Address(i), port).ConvertTo()
        if i < args.cbr:
            h = ns.OnOffHelper("ns3::TcpSocketFactory", remote)
            h.SetAttribute("OnTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=1000000]"))
            h.SetAttribute("OffTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=0]"))
            h.SetAttribute("DataRate", ns.StringValue("300kbps"))
            h.SetAttribute("PacketSize", ns.UintegerValue(1000))
        else:
            h = ns.BulkSendHelper("ns3::TcpSocketFactory", remote)
            h.SetAttribute("MaxBytes", ns.UintegerValue(0))
            h.SetAttribute("SendSize", ns.UintegerValue(1000))
        apps = h.Install(db.GetLeft(i))
        apps.Start(ns.MilliSeconds(10 * i))
        apps.Stop(stop)

    ns.Simulator.Stop(stop)
    setup_s = time.perf_counter() - t0

    t1, c1 = time.perf_counter(), time.process_time()
    ns.Simulator.Run()
    wall_s, cpu_s = time.perf_counter() - t1, time.process_time() - c1

    events = int(ns.Simulator.GetEventCount())
    rx = [int(glue.SinkRx(s)) for s in sinks]
    cbr_rx, bulk_rx = rx[: args.cbr], rx[args.cbr:]
    dur = args.duration

    def mbps(b):
        return round(b * 8 / dur / 1e6, 4)

    out = {
        "workload": "dumbbell",
        "simulator": "ns-3",
        "ns3_version": "3.44",
        "wall_s": round(wall_s, 3),
        "cpu_s": round(cpu_s, 3),
        "setup_s": round(setup_s, 3),
        "import_s": round(IMPORT_S, 3),
        "sim_time_s": dur,
        "events": events,
        "events_per_s": round(events / wall_s) if wall_s > 0 else None,
        "packets": int(glue.PhyTx()),
        "bottleneck_queue_drops": int(glue.BottleneckDrops()),
        "bytes_received": sum(rx),
        "total_goodput_mbps": mbps(sum(rx)),
        "cbr_goodput_mbps_total": mbps(sum(cbr_rx)),
        "cbr_goodput_kbps_min": round(min(cbr_rx) * 8 / dur / 1e3, 1) if cbr_rx else None,
        "cbr_goodput_kbps_max": round(max(cbr_rx) * 8 / dur / 1e3, 1) if cbr_rx else None,
        "bulk_goodput_mbps_total": mbps(sum(bulk_rx)),
        "bulk_goodput_mbps_min": mbps(min(bulk_rx)) if bulk_rx else None,
        "bulk_goodput_mbps_max": mbps(max(bulk_rx)) if bulk_rx else None,
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
