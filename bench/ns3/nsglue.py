"""Shared glue for the ns-3 halves of the thinlab-vs-ns-3 benchmark.

Imports ns-3 (PyPI `ns3` 3.44, cppyy bindings) and JIT-compiles a few small C++ helpers
with cppyy.cppdef, so that nothing runs in Python while Simulator::Run() is being timed:

* ThinWriter: writes `size` bytes to a TCP socket every `interval` (a plain scheduled
  member function, no Application TypeId, so no static registration under cling) and
  records the write times;
* ThinReader: accepts the connection, drains the receive buffer and records, for every
  write, when its last byte was delivered in order (application-layer latency);
* per-device packet counters (PhyTxEnd / PhyRxDrop trace sinks).
"""
import contextlib
import os
import sys


@contextlib.contextmanager
def _quiet_stderr():
    # cppyy/cling prints harmless "Failed to materialize symbols" warnings on import.
    if os.environ.get("NSGLUE_VERBOSE"):
        yield
        return
    fd = sys.stderr.fileno()
    saved = os.dup(fd)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stderr.flush()
        os.dup2(devnull, fd)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, fd)
        os.close(saved)
        os.close(devnull)


with _quiet_stderr():
    from ns import ns  # noqa: E402
    import cppyy  # noqa: E402

    cppyy.cppdef(r"""
#include <algorithm>
#include <vector>
namespace thinlab_bench {
using namespace ns3;

static uint64_t g_phyTx = 0;
static uint64_t g_phyRxDrop = 0;
inline void CountTx(Ptr<const Packet>) { ++g_phyTx; }
inline void CountRxDrop(Ptr<const Packet>) { ++g_phyRxDrop; }
inline void AttachCounters(Ptr<NetDevice> d)
{
    d->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&CountTx));
    d->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&CountRxDrop));
}
inline uint64_t PhyTx() { return g_phyTx; }

// Make the link between routers a and b a drop-tail bottleneck: a FifoQueueDisc of
// `packets` packets on both ends (the device queue in front of it should be ~1 packet).
// Without a queue disc, ns-3 drops in the traffic-control layer once the device queue is
// stopped, where no queue counts it; with one, drops are counted by the queue disc.
static std::vector<Ptr<QueueDisc>> g_bottleneckQdiscs;
inline int InstallBottleneckFifo(Ptr<Node> a, Ptr<Node> b, uint32_t packets)
{
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                         QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, packets)));
    int found = 0;
    for (Ptr<Node> x : {a, b})
        for (uint32_t i = 0; i < x->GetNDevices(); ++i)
        {
            Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(x->GetDevice(i));
            if (!d) continue;
            Ptr<Channel> ch = d->GetChannel();
            bool between = true;
            for (std::size_t k = 0; k < ch->GetNDevices(); ++k)
            {
                uint32_t id = ch->GetDevice(k)->GetNode()->GetId();
                if (id != a->GetId() && id != b->GetId()) between = false;
            }
            if (!between) continue;
            QueueDiscContainer q = tch.Install(d);
            g_bottleneckQdiscs.push_back(q.Get(0));
            ++found;
        }
    return found;
}
inline uint64_t BottleneckDrops()
{
    uint64_t n = 0;
    for (auto& q : g_bottleneckQdiscs) n += q->GetStats().nTotalDroppedPackets;
    return n;
}
// Remove every root queue disc (Ipv4AddressHelper::Assign installs fq_codel by default).
inline void UninstallAllQueueDiscs()
{
    TrafficControlHelper tch;
    for (uint32_t n = 0; n < NodeList::GetNNodes(); ++n)
    {
        Ptr<Node> node = NodeList::GetNode(n);
        for (uint32_t i = 0; i < node->GetNDevices(); ++i)
        {
            Ptr<NetDevice> d = node->GetDevice(i);
            Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
            if (tc && tc->GetRootQueueDiscOnDevice(d)) tch.Uninstall(d);
        }
    }
}

inline uint64_t SinkRx(Ptr<Application> a) { return DynamicCast<PacketSink>(a)->GetTotalRx(); }
inline uint64_t PhyRxDrop() { return g_phyRxDrop; }

// Counts segments a TCP socket puts on the wire and how many of them were retransmissions
// (a segment whose sequence number is below the highest one sent so far).
struct TxCounter
{
    uint64_t segments = 0;
    uint64_t retrans = 0;
    uint32_t highest = 0;
    bool any = false;
    void OnTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if (p->GetSize() == 0) return;
        ++segments;
        uint32_t s = h.GetSequenceNumber().GetValue();
        if (any && s < highest) ++retrans;
        if (!any || s >= highest) { highest = s + p->GetSize(); any = true; }
    }
};

// Per-flow sender counters of a TCP socket: data segments sent, retransmissions (TxCounter)
// and retransmission timeouts. ns-3 has no trace of a timeout firing; every timeout doubles
// the socket's RTO (TcpSocketBase::ReTxTimeout, capped at 60 s), while an RTT sample sets it
// from SRTT and RTTVAR, so a change of the "RTO" value to exactly twice the old one counts
// as one timeout.
struct FlowCounters
{
    TxCounter tx;
    uint64_t rtos = 0;
    void OnRto(Time from, Time to)
    {
        int64_t a = from.GetTimeStep(), b = to.GetTimeStep();
        if (a > 0 && (b == 2 * a || (b > a && to == Seconds(60)))) ++rtos;
    }
};
struct ThinWriter
{
    Ptr<Socket> sock;
    uint32_t size = 120;
    Time interval;
    Time stop;
    std::vector<double> writeTimes;
    uint64_t failed = 0;
    FlowCounters counters;

    Ptr<Node> node;
    Address remote;
    // Connect at `start` (inside Simulator::Run: nodes must be initialised before a socket
    // can send) and write the first chunk right away.
    void Start(Ptr<Node> n, Address r, Time start, uint32_t sz, Time ival, Time stp)
    {
        node = n; remote = r; size = sz; interval = ival; stop = stp;
        Simulator::ScheduleWithContext(node->GetId(), start, &ThinWriter::Connect, this);
    }
    void Connect()
    {
        sock = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        sock->Bind();
        sock->TraceConnectWithoutContext("Tx", MakeCallback(&TxCounter::OnTx, &counters.tx));
        sock->TraceConnectWithoutContext("RTO", MakeCallback(&FlowCounters::OnRto, &counters));
        sock->Connect(remote);
        Write();
    }
    void Write()
    {
        Ptr<Packet> p = Create<Packet>(size);
        if (sock->Send(p) < 0) ++failed; else writeTimes.push_back(Simulator::Now().GetSeconds());
        Time next = Simulator::Now() + interval;
        if (next < stop) Simulator::Schedule(interval, &ThinWriter::Write, this);
    }
};

struct ThinReader
{
    Ptr<Socket> listener;
    uint64_t bytes = 0;
    std::vector<double> deliverTimes; // time the k-th `size`-byte write became complete in order
    uint32_t size = 120;

    void Listen(Ptr<Node> node, uint16_t port, uint32_t sz)
    {
        size = sz;
        listener = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        listener->Listen();
        listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&ThinReader::Accept, this));
    }
    void Accept(Ptr<Socket> s, const Address&) { s->SetRecvCallback(MakeCallback(&ThinReader::Recv, this)); }
    void Recv(Ptr<Socket> s)
    {
        Ptr<Packet> p;
        while ((p = s->Recv()))
        {
            bytes += p->GetSize();
            while ((deliverTimes.size() + 1) * (uint64_t)size <= bytes)
                deliverTimes.push_back(Simulator::Now().GetSeconds());
        }
    }
};

// Application-layer latency in ms for each write that was delivered: returns sorted values.
inline std::vector<double> Latencies(const ThinWriter& w, const ThinReader& r)
{
    std::vector<double> v;
    size_t n = std::min(w.writeTimes.size(), r.deliverTimes.size());
    v.reserve(n);
    for (size_t i = 0; i < n; ++i) v.push_back((r.deliverTimes[i] - w.writeTimes[i]) * 1000.0);
    std::sort(v.begin(), v.end());
    return v;
}

static std::vector<FlowCounters*> g_flowCounters;
inline void HookAppSocket(Ptr<Application> app, FlowCounters* c)
{
    Ptr<Socket> s;
    if (Ptr<BulkSendApplication> b = DynamicCast<BulkSendApplication>(app)) s = b->GetSocket();
    else if (Ptr<OnOffApplication> o = DynamicCast<OnOffApplication>(app)) s = o->GetSocket();
    NS_ABORT_MSG_IF(!s, "application has no socket yet");
    s->TraceConnectWithoutContext("Tx", MakeCallback(&TxCounter::OnTx, &c->tx));
    s->TraceConnectWithoutContext("RTO", MakeCallback(&FlowCounters::OnRto, c));
}
// Attach counters to `app`'s socket just after the application has started at `start`.
inline void CountFlowAt(Ptr<Application> app, Time start)
{
    FlowCounters* c = new FlowCounters;
    g_flowCounters.push_back(c);
    Simulator::Schedule(start + MicroSeconds(1), &HookAppSocket, app, c);
}
inline uint64_t FlowSegments(size_t i) { return g_flowCounters.at(i)->tx.segments; }
inline uint64_t FlowRetrans(size_t i) { return g_flowCounters.at(i)->tx.retrans; }
inline uint64_t FlowRtos(size_t i) { return g_flowCounters.at(i)->rtos; }

inline void AttachTxCounter(Ptr<Socket> s, TxCounter* c)
{
    s->TraceConnectWithoutContext("Tx", MakeCallback(&TxCounter::OnTx, c));
}
} // namespace thinlab_bench
""")

glue = cppyy.gbl.thinlab_bench


def percentile(sorted_vals, q):
    """Nearest-rank percentile of an already sorted sequence (None if empty)."""
    n = len(sorted_vals)
    if n == 0:
        return None
    k = max(0, min(n - 1, int(-(-q * n // 1)) - 1))
    return float(sorted_vals[k])
