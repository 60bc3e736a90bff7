#!/usr/bin/env python3
"""ns-3 half of benchmark (b): 24 CBR + 24 bulk TCP flows over a 25 Mbit/s dumbbell.

Topology (thinlab's): 48 senders -- 10 Mbit/s, 2.5 ms access links -- router -- 25 Mbit/s,
22.5 ms bottleneck -- one receiver host that runs all 48 receivers (port 9000 + i), i.e.
50 ms RTT of propagation and no receiver-side access hop. The default fq_codel queue discs
are removed; the bottleneck (both directions) gets a drop-tail FifoQueueDisc of queue-1
packets in front of a 1-packet device queue (156 packets waiting, as thinlab's
queue_packets = 156). Access links have no queue disc and 156-packet device queues (as
thinlab's access links, which take the network's queue limit).

TCP NewReno, SACK on, Nagle off, MinRto 200 ms, SegmentSize (MSS) 1000, no delayed ACKs
(DelAckCount 1; --delack-count 2 is ns-3's default, which with its 200 ms delayed-ACK timer
and the 200 ms minimum RTO makes small-window flows time out spuriously). Flows 0-23: an
OnOffApplication that is always on, 300 kbit/s in 1000-byte writes (CBR over TCP); flows
24-47: BulkSendApplication (unbounded, 1000-byte writes). Flow i starts at i*10 ms; all
applications stop at 100 s and so does the simulation.

Prints one JSON line: wall_s / cpu_s are the wall and CPU time of Simulator::Run() only
(time.perf_counter / time.process_time), plus what the run did (packets per hop, data
segments, retransmissions, RTOs, drops, goodput) to compare with thinlab's.
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
    ap.add_argument("--delack-count", type=int, default=1,
                    help="segments per delayed ACK (1 = none, as thinlab's delayed_ack = off; "
                         "ns-3's default is 2)")
    ap.add_argument("--initial-cwnd", type=int, default=10, help="segments (ns-3 default 10)")
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
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(args.delack_count))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(args.initial_cwnd))

    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue("10Mbps"))
    access.SetChannelAttribute("Delay", ns.StringValue("2.5ms"))
    access.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue(f"{args.queue}p"))
    bottleneck = ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue("25Mbps"))
    bottleneck.SetChannelAttribute("Delay", ns.StringValue("22.5ms"))
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", ns.StringValue("1p"))

    # thinlab's topology: sender i -- access link i -- router == bottleneck ==> receiver host.
    # The bottleneck ends at the host that runs every receiver (one port per flow), so there
    # is no receiver-side access hop (thinlab has none).
    senders = ns.NodeContainer()
    senders.Create(n)
    core = ns.NodeContainer()
    core.Create(2)
    router, receiver = core.Get(0), core.Get(1)
    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(core)
    addr = ns.Ipv4AddressHelper()
    for i in range(n):
        devs = access.Install(senders.Get(i), router)
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(devs)
    addr.SetBase(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.0"))
    rx_addr = addr.Assign(bottleneck.Install(router, receiver)).GetAddress(1)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    glue.UninstallAllQueueDiscs()
    # queue - 1 in the queue disc + 1 in the device queue = `queue` packets waiting, as in
    # thinlab (whose limit excludes the packet being serialised, as ns-3's device does).
    assert glue.InstallBottleneckFifo(router, receiver, args.queue - 1) == 2

    # Count packet transmissions on every hop and drops at the bottleneck queues.
    for node_idx in range(ns.NodeList.GetNNodes()):
        node = ns.NodeList.GetNode(node_idx)
        for i in range(node.GetNDevices()):
            glue.AttachCounters(node.GetDevice(i))

    stop = ns.Seconds(args.duration)
    sinks = []
    for i in range(n):
        port = 9000 + i
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_apps = sink_helper.Install(receiver)
        sink_apps.Start(ns.Seconds(0.0))
        sink_apps.Stop(stop)
        sinks.append(sink_apps.Get(0))

        remote = ns.InetSocketAddress(rx_addr, port).ConvertTo()
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
        apps = h.Install(senders.Get(i))
        start = ns.MilliSeconds(10 * i)
        apps.Start(start)
        apps.Stop(stop)
        glue.CountFlowAt(apps.Get(0), start)

    ns.Simulator.Stop(stop)
    setup_s = time.perf_counter() - t0

    # Simulator::Run() alone, by wall clock and by this process's CPU time.
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
        "data_segments_sent": sum(int(glue.FlowSegments(i)) for i in range(n)),
        "retransmissions": sum(int(glue.FlowRetrans(i)) for i in range(n)),
        "rto_events": sum(int(glue.FlowRtos(i)) for i in range(n)),
        "cbr_rto_events": sum(int(glue.FlowRtos(i)) for i in range(args.cbr)),
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
