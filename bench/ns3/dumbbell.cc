// A dumbbell for ns-3 (3.37) with the same work as cclab's bench-vs-ns3 scenario, so
// scripts/bench-vs-ns3.sh can time both simulators on one machine.
//
//   sender i --access--> left router --bottleneck--> right router --access--> receiver i
//
// N bulk TCP flows of one algorithm; each flow has its own pair of access links, much
// faster than the bottleneck, that carry the part of the base RTT the bottleneck does
// not. The bottleneck is a point-to-point link whose only queue is the device's DropTail
// queue of QUEUE packets (the traffic-control layer's default queue disc is removed, so
// nothing else buffers or drops). TCP is set up like Linux and like cclab's defaults:
// MSS 1448 with timestamps (1500-byte IP packets), SACK, PRR, rto_min 200 ms, delayed
// ACKs every 2 segments or 40 ms, initial window 10.
//
// At the end it prints the packets the bottleneck transmitted and its utilisation (the
// fraction of the run the transmitter was busy, link-layer bytes over rate x duration).
//
// Build (scripts/bench-vs-ns3.sh does this):
//   g++ -O2 -std=c++17 dumbbell.cc -o dumbbell -lns3-core -lns3-network -lns3-internet
//       -lns3-point-to-point -lns3-applications -lns3-traffic-control
// Run:   ./dumbbell --cc=cubic --flows=1 --rate=100Mbps --rtt=50ms --queue=416 --duration=60s

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>
#include <string>

using namespace ns3;

namespace
{

/// What the command line chooses.
struct Options
{
    std::string cc = "cubic";
    uint32_t flows = 1;
    std::string rate = "100Mbps";
    Time rtt = MilliSeconds(50);
    Time bottleneckDelay = MilliSeconds(5);
    uint32_t queuePackets = 416;
    Time duration = Seconds(60);
    uint32_t mss = 1448;
};

/// Access links run this many times faster than the bottleneck, so their serialisation
/// adds little to the RTT and they never queue for long.
const uint64_t ACCESS_SPEEDUP = 100;
const uint16_t PORT = 5001;

/// Bottleneck counters, updated by the PhyTxEnd trace of the bottleneck's sending device.
uint64_t g_bottleneckPackets = 0;
uint64_t g_bottleneckBytes = 0;

void
CountBottleneckPacket(Ptr<const Packet> p)
{
    g_bottleneckPackets++;
    g_bottleneckBytes += p->GetSize();
}

/// The ns-3 congestion-control type for cclab's algorithm name, or exits with an error.
TypeId
CongestionType(const std::string& cc)
{
    if (cc == "cubic")
    {
        return TcpCubic::GetTypeId();
    }
    if (cc == "reno")
    {
        return TcpLinuxReno::GetTypeId();
    }
    if (cc == "newreno")
    {
        return TcpNewReno::GetTypeId();
    }
    std::fprintf(stderr,
                 "error: --cc=%s: unknown algorithm; allowed: cubic (TcpCubic), reno "
                 "(TcpLinuxReno), newreno (TcpNewReno)\n",
                 cc.c_str());
    std::exit(2);
}

/// Socket defaults for every TCP socket created afterwards (Linux-like, as cclab).
void
ConfigureTcp(const Options& o, uint64_t bufferBytes)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(CongestionType(o.cc)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpPrrRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(o.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufferBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufferBytes));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
}

/// Speed settings for ns-3 that leave the simulated packets exactly as they are.
void
ConfigureSpeed()
{
    // With the weak end-system model every router checks a forwarded packet's destination
    // against the addresses of all its interfaces (101 of them with 100 flows); the strong
    // model checks only the interface it came in on. Here a packet for a node always
    // arrives on that node's only interface, so the output is identical (checked on the
    // 1-flow and 100-flow cases) and the 100-flow case takes about 30% less time.
    Config::SetDefault("ns3::Ipv4::WeakEsModel", BooleanValue(false));
}

/// Reads and checks the command line; exits with a message naming the bad option.
Options
ParseOptions(int argc, char* argv[])
{
    Options o;
    CommandLine cmd(__FILE__);
    cmd.AddValue("cc", "algorithm: cubic, reno (TcpLinuxReno) or newreno (TcpNewReno)", o.cc);
    cmd.AddValue("flows", "number of bulk flows", o.flows);
    cmd.AddValue("rate", "bottleneck rate, e.g. 100Mbps", o.rate);
    cmd.AddValue("rtt", "base RTT of every flow, bottleneck delay included", o.rtt);
    cmd.AddValue("bottleneckDelay", "one-way delay of the bottleneck link", o.bottleneckDelay);
    cmd.AddValue("queue", "bottleneck DropTail queue in packets", o.queuePackets);
    cmd.AddValue("duration", "simulated time", o.duration);
    cmd.AddValue("mss", "TCP payload bytes per segment", o.mss);
    cmd.Parse(argc, argv);
    const char* bad = nullptr;
    if (o.flows == 0)
    {
        bad = "--flows must be at least 1";
    }
    else if (o.queuePackets == 0)
    {
        bad = "--queue must be at least 1 packet";
    }
    else if (o.rtt <= o.bottleneckDelay * 2)
    {
        bad = "--rtt must exceed twice --bottleneckDelay (the access links need some delay)";
    }
    else if (o.duration <= Time(0))
    {
        bad = "--duration must be positive";
    }
    if (bad)
    {
        std::fprintf(stderr, "error: %s\n", bad);
        std::exit(2);
    }
    return o;
}

/// A point-to-point link between two nodes; returns its two devices.
NetDeviceContainer
Link(Ptr<Node> a, Ptr<Node> b, DataRate rate, Time delay, uint32_t queuePackets)
{
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(rate));
    p2p.SetChannelAttribute("Delay", TimeValue(delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queuePackets)));
    return p2p.Install(a, b);
}

/// Gives the two ends of a link their own /30 and removes the default queue disc that
/// address assignment installs, so the device queue is the only one. Returns the
/// interfaces.
Ipv4InterfaceContainer
AssignSubnet(Ipv4AddressHelper& addresses, const NetDeviceContainer& devices)
{
    Ipv4InterfaceContainer ifaces = addresses.Assign(devices);
    addresses.NewNetwork();
    TrafficControlHelper().Uninstall(devices);
    return ifaces;
}

/// Payload bytes the receivers' applications got, all flows together.
uint64_t
DeliveredBytes(const ApplicationContainer& sinks)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < sinks.GetN(); i++)
    {
        total += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
    }
    return total;
}

/// Builds the dumbbell and the applications, and runs the simulation.
void
Run(const Options& o)
{
    DataRate bottleneckRate(o.rate);
    DataRate accessRate(bottleneckRate.GetBitRate() * ACCESS_SPEEDUP);
    // The RTT outside the bottleneck, split evenly over the two access links.
    Time accessDelay = (o.rtt - o.bottleneckDelay * 2) / 4;
    // Room for every packet a flow could have in flight (the path's BDP plus the whole
    // queue) twice over, so socket buffers never limit the window, as in cclab.
    uint64_t bdpBytes = bottleneckRate.GetBitRate() / 8 * o.rtt.GetSeconds();
    uint64_t pathBytes = bdpBytes + uint64_t(o.queuePackets) * 1500;
    ConfigureTcp(o, 2 * pathBytes);
    ConfigureSpeed();

    NodeContainer routers(2);
    NodeContainer senders(o.flows);
    NodeContainer receivers(o.flows);
    InternetStackHelper stack;
    stack.InstallAll();

    Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
    NetDeviceContainer bottleneck = Link(routers.Get(0),
                                         routers.Get(1),
                                         bottleneckRate,
                                         o.bottleneckDelay,
                                         o.queuePackets);
    AssignSubnet(addresses, bottleneck);
    bottleneck.Get(0)->TraceConnectWithoutContext("PhyTxEnd",
                                                  MakeCallback(&CountBottleneckPacket));

    // Access queues are deep: they only absorb window bursts and never drop.
    const uint32_t accessQueue = 2 * o.queuePackets + 1000;
    ApplicationContainer apps;
    ApplicationContainer sinks;
    for (uint32_t i = 0; i < o.flows; i++)
    {
        AssignSubnet(addresses,
                     Link(senders.Get(i), routers.Get(0), accessRate, accessDelay, accessQueue));
        Ipv4InterfaceContainer rx = AssignSubnet(
            addresses,
            Link(routers.Get(1), receivers.Get(i), accessRate, accessDelay, accessQueue));
        InetSocketAddress sinkAddress(rx.GetAddress(1), PORT);
        BulkSendHelper bulk("ns3::TcpSocketFactory", sinkAddress);
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(o.mss));
        apps.Add(bulk.Install(senders.Get(i)));
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), PORT));
        sinks.Add(sink.Install(receivers.Get(i)));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    apps.Start(Seconds(0));
    sinks.Start(Seconds(0));

    Simulator::Stop(o.duration);
    Simulator::Run();
    double capacityBytes = bottleneckRate.GetBitRate() / 8.0 * o.duration.GetSeconds();
    std::printf("flows %u cc %s rate %s rtt_ms %.3f queue_pkts %u duration_s %.3f\n",
                o.flows,
                o.cc.c_str(),
                o.rate.c_str(),
                o.rtt.GetSeconds() * 1e3,
                o.queuePackets,
                o.duration.GetSeconds());
    std::printf("bottleneck_packets %llu\n", (unsigned long long)g_bottleneckPackets);
    std::printf("utilization %.4f\n", g_bottleneckBytes / capacityBytes);
    std::printf("delivered_bytes %llu\n", (unsigned long long)DeliveredBytes(sinks));
    Simulator::Destroy();
}

} // namespace

int
main(int argc, char* argv[])
{
    Run(ParseOptions(argc, argv));
    return 0;
}
