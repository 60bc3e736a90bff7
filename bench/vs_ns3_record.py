#!/usr/bin/env python3
"""One benchmark run of bench/vs-ns3.sh as one JSON line: what was timed and what the
simulator did (packets, drops, goodput, retransmissions, RTOs), so that the report can show
side by side that thinlab, ns-3 and htsim did the same work.

    vs_ns3_record.py SIM WORKLOAD RUN "WALL CPU" DIR

SIM is thinlab (DIR/out holds summary.json and timing.json), ns-3 (DIR/stdout.txt holds the
script's JSON line) or htsim (DIR/stderr.txt holds the local driver's JSON line: keys
wall_s, cpu_s, events, data_packets_sent, bottleneck_queue_drops, fast_recoveries,
rto_events, bytes_delivered, packets_lost, total/cbr/bulk_goodput_mbps(_total)); "WALL CPU"
are the seconds of wall and CPU time of the whole process as measured by the harness.
"""
import json
import sys


def last_json_line(path):
    lines = [line for line in open(path) if line.startswith("{")]
    if not lines:
        raise SystemExit(f"vs-ns3: no JSON line in {path}")
    return json.loads(lines[-1])


def thinlab(rec, d, workload):
    d = f"{d}/out"
    rec["sim_wall_s"] = None
    # thinlab's own simulate-only time: timing.json (`sim_wall_s`, summed over runs), written
    # next to summary.json, which stays deterministic and carries no wall times.
    try:
        t = json.load(open(f"{d}/timing.json"))
        if isinstance(t.get("sim_wall_s"), (int, float)):
            rec["sim_wall_s"] = float(t["sim_wall_s"])
    except (OSError, ValueError) as e:
        rec["timing_error"] = str(e)
    s = json.load(open(f"{d}/summary.json"))
    runs = s.get("runs") or []
    flows = [f for r in runs for f in r.get("flows", [])]

    def run_total(key):
        v = [r.get(key) for r in runs if isinstance(r.get(key), (int, float))]
        return sum(v) if v else None

    def flow_total(key):
        v = [f.get("metrics", {}).get(key) for f in flows]
        v = [x for x in v if isinstance(x, (int, float))]
        return sum(v) if v else None

    rec["events"] = run_total("events_processed")
    rec["queue_drops"] = run_total("dropped_queue")
    rec["loss_drops"] = run_total("dropped_loss")
    rec["data_segments_sent"] = flow_total("data_packets_sent")
    rec["bytes_delivered"] = flow_total("bytes_delivered")
    rec["retransmissions"] = flow_total("retransmissions")
    rec["rto_events"] = flow_total("rto_events")
    g = flow_total("goodput_bps")
    rec["goodput_mbps"] = round(g / 1e6, 4) if g is not None else None
    if workload == "dumbbell":
        cbr = [f["metrics"].get("goodput_bps") or 0 for f in flows if f["name"].startswith("cbr")]
        rec["cbr_goodput_mbps"] = round(sum(cbr) / 1e6, 4)
        rec["bulk_goodput_mbps"] = round((g or 0) / 1e6 - sum(cbr) / 1e6, 4)
    lat = [f.get("metrics", {}).get("app_latency_ms") for f in flows]
    if workload == "thin_stream" and lat and isinstance(lat[0], dict):
        rec["app_latency_ms"] = {k: lat[0].get(k) for k in ("mean", "p50", "p99", "p999", "max")}


def ns3(rec, d, workload):
    r = last_json_line(f"{d}/stdout.txt")
    rec["sim_wall_s"], rec["sim_cpu_s"] = r["wall_s"], r.get("cpu_s")
    rec["events"] = r.get("events")
    rec["packet_hops"] = r.get("packets")
    rec["queue_drops"] = r.get("bottleneck_queue_drops")
    rec["loss_drops"] = r.get("packets_lost")
    rec["data_segments_sent"] = r.get("data_segments_sent")
    rec["bytes_delivered"] = r.get("bytes_delivered", r.get("bytes_received"))
    rec["retransmissions"] = r.get("retransmissions")
    rec["rto_events"] = r.get("rto_events")
    rec["goodput_mbps"] = r.get("total_goodput_mbps")
    rec["cbr_goodput_mbps"] = r.get("cbr_goodput_mbps_total")
    rec["bulk_goodput_mbps"] = r.get("bulk_goodput_mbps_total")
    if "app_latency_ms" in r:
        rec["app_latency_ms"] = r["app_latency_ms"]
    rec["ns3"] = r


def htsim(rec, d, workload):
    r = last_json_line(f"{d}/stderr.txt")
    rec["sim_wall_s"], rec["sim_cpu_s"] = r["wall_s"], r.get("cpu_s")
    rec["events"] = r.get("events")
    rec["queue_drops"] = r.get("bottleneck_queue_drops")
    rec["data_segments_sent"] = r.get("data_packets_sent")
    # htsim's TcpSrc counts fast-recovery episodes (its `_drops`), not retransmitted segments.
    rec["fast_recoveries"] = r.get("fast_recoveries")
    rec["rto_events"] = r.get("rto_events")
    rec["bytes_delivered"] = r.get("bytes_delivered")
    rec["loss_drops"] = r.get("packets_lost")
    rec["goodput_mbps"] = r.get("total_goodput_mbps")
    rec["cbr_goodput_mbps"] = r.get("cbr_goodput_mbps_total")
    rec["bulk_goodput_mbps"] = r.get("bulk_goodput_mbps_total")
    rec["htsim"] = r


def main():
    sim, workload, run, times, d = sys.argv[1:6]
    wall, cpu = (float(x) for x in times.split())
    rec = {"sim": sim, "workload": workload, "run": int(run),
           "process_wall_s": wall, "process_cpu_s": cpu}
    {"thinlab": thinlab, "ns-3": ns3, "htsim": htsim}[sim](rec, d, workload)
    print(json.dumps(rec))


if __name__ == "__main__":
    main()
