// siwx-imm-bench: latency and message rate of RDMA Write with Immediate,
// which Debian's perftest cannot measure, and the same for an RDMA Write
// followed by a Send (what an application does without write-with-imm);
// and the bandwidth of plain RDMA Writes with the writer sleeping on
// completion events, which perftest's ib_write_bw refuses (its -e is for
// Send and Read only).
//
//   server: siwx-imm-bench -s [-p PORT]
//   client: siwx-imm-bench -c ADDR [-p PORT] [-m lat|rate|bw|clat]
//                          [-o imm|write-send|write] [-b BYTES] [-n ITERS]
//                          [-w WINDOW] [-e] [-t SECONDS]
//
// lat:  ping-pong; each side answers the other's message with its own, the
//       client reports half the round trip (median, mean, p99) in us.
// rate: the client streams messages, the server returns one credit Send per
//       window; the client reports messages and megabytes per second.
// bw:   (op write) the client keeps WINDOW RDMA Writes in flight until ITERS
//       have completed, then a Send that the server answers: the clock
//       stops when every byte is in the server's memory, not when the
//       last Write left (a sender's completion says only that).
// clat: (op write) completion latency: the client posts one RDMA Write at
//       a time and times each from its post to its completion (median,
//       mean, p99, in us): how soon the application may reuse its buffer.
//       A copied Write completes once TCP has taken its octets, a
//       zero-copy one (siwx's zc_min) only once TCP let go of its pages.
// -e:   both sides wait for completions asleep (a completion channel), as
//       iperf3 waits in send(), instead of busy-polling the CQ.
// -t:   a run in which no completion (or, once connecting, no connection
//       event) comes for SECONDS (default 60; 0: wait forever) stops with
//       what it was waiting for and how far it got, instead of hanging
//       until whoever runs it gives up.
// The last line is machine-readable: "result,<mode>,<op>,<bytes>,<iters>,
// <median_us|msgs_per_s>,<mean_us|MB_per_s>,<p99_us|0>".
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include "tp_common.h"  // rdma_cm setup, shared with tests/progs
}

namespace {

struct Options {
    bool server = false;
    std::string addr;
    uint16_t port = 18520;
    std::string mode = "lat";
    std::string op = "imm";
    uint32_t bytes = 8;
    uint32_t iters = 1000;
    uint32_t window = 64;
    bool events = false;
    int stall_s = 60;
};

// Operations, by their number in the connection's private data.
const char* const kOps[] = {"write-send", "imm", "write"};

[[noreturn]] void Die(const std::string& what) {
    std::fprintf(stderr, "siwx-imm-bench: %s\n", what.c_str());
    std::exit(1);
}

void Check(bool ok, const char* what) {
    if (!ok) Die(std::string(what) + ": " + std::strerror(errno));
}
// ibv_post_*() return the error instead of setting errno (some providers
// return it negated).
void CheckPost(int rc, const char* what) {
    if (rc) Die(std::string(what) + ": " + std::strerror(std::abs(rc)));
}

// Waits until @fd is readable; false once @seconds passed (0: never).
bool WaitReadable(int fd, int seconds) {
    pollfd p{fd, POLLIN, 0};
    int rc;
    do rc = poll(&p, 1, seconds ? seconds * 1000 : -1);
    while (rc < 0 && errno == EINTR);
    Check(rc >= 0, "poll");
    return rc > 0;
}

// What the peers tell each other at connection time.
struct PeerInfo {
    uint64_t addr;
    uint32_t rkey;
    uint32_t bytes;
};

// One CQ for sends and receives (with the channel under -e), on the PD
// that the connection's device got.
tp_qp_opts QpOpts(uint32_t depth, bool events) {
    tp_qp_opts q{};
    q.max_send_wr = 2 * depth + 1;  // write-send: two WRs a message
    q.max_recv_wr = depth + 1;
    q.max_sge = 1;
    q.recv_channel = events;
    q.one_cq = true;
    q.rd_atomic = 1;
    return q;
}

// A connection set up to its QP (tp_setup_qp), with its buffer and the
// receives the peer's first messages need, posted before connecting.
class Endpoint {
  public:
    Endpoint(tp_conn* c, uint32_t bytes, uint32_t depth, int stall_s)
        : c_(c), stall_s_(stall_s), cq_(c->scq), channel_(c->rch) {
        buf_.assign(std::max<uint32_t>(bytes, 8), 0x5a);
        mr_ = ibv_reg_mr(c->pd, buf_.data(), buf_.size(),
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        Check(mr_, "ibv_reg_mr");
        for (uint32_t i = 0; i < depth; ++i) PostRecv();
    }

    ~Endpoint() {
        ibv_pd* pd = c_->pd;
        tp_close(c_, 2000);
        ibv_dereg_mr(mr_);
        ibv_dealloc_pd(pd);
    }

    void set_stall_seconds(int s) { stall_s_ = s; }

    PeerInfo Info() const { return {uint64_t(uintptr_t(buf_.data())), mr_->rkey, 0}; }

    // Receives carry no data: immediates and credits only need the WQE.
    // Still one (unused) SGE: upstream siw's provider refuses a receive
    // WR without SGEs (EINVAL), which verbs allow.
    void PostRecv() {
        ibv_sge sge{uint64_t(uintptr_t(buf_.data())), 0, mr_->lkey};
        ibv_recv_wr wr{};
        ibv_recv_wr* bad;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        CheckPost(ibv_post_recv(c_->qp, &wr, &bad), "ibv_post_recv");
    }

    // One message of @op (imm: write-with-imm; write-send: write + send;
    // write: a Write alone).
    void Post(const std::string& op, const PeerInfo& peer, uint32_t bytes, uint32_t seq,
              bool signal) {
        ibv_sge sge{uint64_t(uintptr_t(buf_.data())), bytes, mr_->lkey};
        ibv_send_wr wr{};
        ibv_send_wr* bad;
        wr.wr_id = seq;
        wr.sg_list = bytes ? &sge : nullptr;
        wr.num_sge = bytes ? 1 : 0;
        wr.wr.rdma.remote_addr = peer.addr;
        wr.wr.rdma.rkey = peer.rkey;
        if (op != "write-send") {
            wr.opcode = op == "imm" ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
            wr.imm_data = htonl(seq);
            wr.send_flags = signal ? IBV_SEND_SIGNALED : 0;
            CheckPost(ibv_post_send(c_->qp, &wr, &bad), "ibv_post_send");
            return;
        }
        ibv_send_wr send{};
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.next = &send;
        send.wr_id = seq;
        send.opcode = IBV_WR_SEND;
        send.send_flags = signal ? IBV_SEND_SIGNALED : 0;
        CheckPost(ibv_post_send(c_->qp, &wr, &bad), "ibv_post_send");
    }

    // A zero-length Send: a credit or an answer that is not measured.
    void PostCredit() {
        ibv_send_wr wr{};
        ibv_send_wr* bad;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        CheckPost(ibv_post_send(c_->qp, &wr, &bad), "ibv_post_send");
        DrainSends(1);
    }

    // Busy-poll until a receive completes (and repost it).
    void WaitRecv() {
        while (!recvs_done_) PollOne("a receive");
        --recvs_done_;
        PostRecv();
    }

    // Busy-poll until @n signalled sends have completed.
    void DrainSends(uint32_t n) {
        while (sends_done_ < n) PollOne("a send");
        sends_done_ -= n;
    }

  private:
    // One completion of either kind: both share the CQ. With a channel,
    // an empty CQ is armed and polled once more (a completion that came
    // before the arming raises no event), then the caller sleeps until
    // the next one.
    void PollOne(const char* awaited) {
        ibv_wc wc;
        int n = ibv_poll_cq(cq_, 1, &wc);
        Check(n >= 0, "ibv_poll_cq");
        if (n == 0 && channel_) {
            CheckPost(ibv_req_notify_cq(cq_, 0), "ibv_req_notify_cq");
            n = ibv_poll_cq(cq_, 1, &wc);
            Check(n >= 0, "ibv_poll_cq");
            if (n == 0) {
                if (!WaitReadable(channel_->fd, stall_s_)) Stalled(awaited);
                ibv_cq* cq;
                void* ctx;
                Check(ibv_get_cq_event(channel_, &cq, &ctx) == 0, "ibv_get_cq_event");
                ibv_ack_cq_events(cq, 1);
                return;
            }
        }
        if (n == 0) {
            Idle(awaited);
            return;
        }
        idle_polls_ = 0;
        if (wc.status != IBV_WC_SUCCESS)
            Die(std::string("completion error: ") + ibv_wc_status_str(wc.status));
        if (wc.opcode & IBV_WC_RECV) {
            ++recvs_done_;
            ++recvs_total_;
        } else {
            ++sends_done_;
            ++sends_total_;
        }
    }

    // An empty poll. The clock is read once every kIdleCheck of them, so
    // that a busy-polled completion costs no clock read.
    void Idle(const char* awaited) {
        constexpr uint64_t kIdleCheck = 4096;
        if (!stall_s_ || ++idle_polls_ % kIdleCheck) return;
        auto now = std::chrono::steady_clock::now();
        if (idle_polls_ == kIdleCheck)
            idle_since_ = now;
        else if (now - idle_since_ > std::chrono::seconds(stall_s_))
            Stalled(awaited);
    }

    [[noreturn]] void Stalled(const char* awaited) {
        Die("no completion for " + std::to_string(stall_s_) + " s while waiting for " + awaited +
            " (completed so far: " + std::to_string(sends_total_) + " signalled sends, " +
            std::to_string(recvs_total_) + " receives): the peer or the link stalled");
    }

    uint32_t recvs_done_ = 0;
    uint32_t sends_done_ = 0;
    uint64_t recvs_total_ = 0;
    uint64_t sends_total_ = 0;
    uint64_t idle_polls_ = 0;
    std::chrono::steady_clock::time_point idle_since_;

    tp_conn* c_;
    int stall_s_;
    ibv_cq* cq_;
    ibv_comp_channel* channel_;
    ibv_mr* mr_ = nullptr;
    std::vector<uint8_t> buf_;
};

double Micros(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

struct Percentiles {
    double median, mean, p99;
};

Percentiles Summarize(std::vector<double>& us) {
    std::sort(us.begin(), us.end());
    double sum = 0;
    for (double u : us) sum += u;
    return {us[us.size() / 2], sum / double(us.size()), us[us.size() * 99 / 100]};
}

void RunLatency(Endpoint& ep, const PeerInfo& peer, const Options& o, bool client) {
    std::vector<double> rtt;
    rtt.reserve(o.iters);
    for (uint32_t i = 0; i < o.iters; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        if (client) {
            ep.Post(o.op, peer, o.bytes, i, true);
            ep.WaitRecv();
            ep.DrainSends(1);
            rtt.push_back(Micros(std::chrono::steady_clock::now() - t0));
        } else {
            ep.WaitRecv();
            ep.Post(o.op, peer, o.bytes, i, true);
            ep.DrainSends(1);
        }
    }
    if (!client) return;
    Percentiles p = Summarize(rtt);  // of round trips: half is one way
    std::printf("%s %u B: one-way latency median %.2f us, mean %.2f us, p99 %.2f us (%u iters)\n",
                o.op.c_str(), o.bytes, p.median / 2, p.mean / 2, p.p99 / 2, o.iters);
    std::printf("result,lat,%s,%u,%u,%.3f,%.3f,%.3f\n", o.op.c_str(), o.bytes, o.iters,
                p.median / 2, p.mean / 2, p.p99 / 2);
}

void RunRate(Endpoint& ep, const PeerInfo& peer, const Options& o, bool client) {
    uint32_t batches = (o.iters + o.window - 1) / o.window;
    auto t0 = std::chrono::steady_clock::now();
    uint32_t seq = 0;
    for (uint32_t b = 0; b < batches; ++b) {
        uint32_t n = std::min(o.window, o.iters - b * o.window);
        if (client) {
            for (uint32_t i = 0; i < n; ++i) ep.Post(o.op, peer, o.bytes, seq++, i + 1 == n);
            ep.DrainSends(1);
            ep.WaitRecv();  // the server's credit for this window
        } else {
            for (uint32_t i = 0; i < n; ++i) ep.WaitRecv();
            ep.PostCredit();
        }
    }
    if (!client) return;
    double secs = Micros(std::chrono::steady_clock::now() - t0) / 1e6;
    double rate = o.iters / secs, mbps = rate * o.bytes / 1e6;
    std::printf("%s %u B: %.0f msgs/s, %.2f MB/s (%u messages, window %u)\n", o.op.c_str(), o.bytes,
                rate, mbps, o.iters, o.window);
    std::printf("result,rate,%s,%u,%u,%.1f,%.3f,0\n", o.op.c_str(), o.bytes, o.iters, rate, mbps);
}

// The server of bw and clat answers the client's last Send: every Write
// is placed.
void ServeWrites(Endpoint& ep) {
    // No completion comes here before it, however long the Writes take;
    // should the client stall, its own limit ends it, and its QP's end
    // flushes this receive.
    ep.set_stall_seconds(0);
    ep.WaitRecv();
    ep.PostCredit();
}

void RunCompletionLatency(Endpoint& ep, const PeerInfo& peer, const Options& o, bool client) {
    if (!client) return ServeWrites(ep);
    std::vector<double> us;
    us.reserve(o.iters);
    for (uint32_t i = 0; i < o.iters; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        ep.Post(o.op, peer, o.bytes, i, true);
        ep.DrainSends(1);
        us.push_back(Micros(std::chrono::steady_clock::now() - t0));
    }
    ep.PostCredit();
    ep.WaitRecv();
    Percentiles p = Summarize(us);
    std::printf(
        "%s %u B: completion latency median %.2f us, mean %.2f us, p99 %.2f us (%u iters, %s)\n",
        o.op.c_str(), o.bytes, p.median, p.mean, p.p99, o.iters,
        o.events ? "completion events" : "polling");
    std::printf("result,clat,%s,%u,%u,%.3f,%.3f,%.3f\n", o.op.c_str(), o.bytes, o.iters, p.median,
                p.mean, p.p99);
}

void RunBandwidth(Endpoint& ep, const PeerInfo& peer, const Options& o, bool client) {
    if (!client) return ServeWrites(ep);
    auto t0 = std::chrono::steady_clock::now();
    uint32_t posted = 0;
    for (; posted < std::min(o.window, o.iters); ++posted)
        ep.Post(o.op, peer, o.bytes, posted, true);
    for (uint32_t done = 0; done < o.iters; ++done) {
        ep.DrainSends(1);
        if (posted < o.iters) ep.Post(o.op, peer, o.bytes, posted++, true);
    }
    ep.PostCredit();
    ep.WaitRecv();
    double secs = Micros(std::chrono::steady_clock::now() - t0) / 1e6;
    double rate = o.iters / secs, mbps = rate * o.bytes / 1e6;
    std::printf("%s %u B: %.2f MiB/s, %.0f msgs/s (%u messages, window %u, %s)\n", o.op.c_str(),
                o.bytes, mbps * 1e6 / (1 << 20), rate, o.iters, o.window,
                o.events ? "completion events" : "polling");
    std::printf("result,bw,%s,%u,%u,%.1f,%.3f,0\n", o.op.c_str(), o.bytes, o.iters, rate, mbps);
}

Options Parse(int argc, char** argv) {
    Options o;
    int c;
    while ((c = getopt(argc, argv, "sc:p:m:o:b:n:w:et:")) != -1) {
        switch (c) {
            case 's':
                o.server = true;
                break;
            case 'c':
                o.addr = optarg;
                break;
            case 'p':
                o.port = uint16_t(tp_parse_u64(optarg, "-p", 1, 65535));
                break;
            case 'm':
                o.mode = optarg;
                break;
            case 'o':
                o.op = optarg;
                break;
            case 'b':
                o.bytes = uint32_t(std::strtoul(optarg, nullptr, 0));
                break;
            case 'n':
                o.iters = uint32_t(std::strtoul(optarg, nullptr, 0));
                break;
            case 'w':
                o.window = uint32_t(std::strtoul(optarg, nullptr, 0));
                break;
            case 'e':
                o.events = true;
                break;
            case 't':
                o.stall_s = int(std::strtol(optarg, nullptr, 0));
                break;
            default:
                Die("usage: -s | -c ADDR [-p PORT] [-m lat|rate|bw|clat] "
                    "[-o imm|write-send|write] [-b BYTES] [-n ITERS] [-w WINDOW] [-e] "
                    "[-t SECONDS]");
        }
    }
    if (o.server == !o.addr.empty()) Die("give exactly one of -s and -c ADDR");
    bool writes = o.mode == "bw" || o.mode == "clat";
    if ((o.mode != "lat" && o.mode != "rate" && !writes) ||
        (writes ? o.op != "write" : o.op != "imm" && o.op != "write-send"))
        Die("mode lat or rate with op imm or write-send, or mode bw or clat with op write");
    if (o.window == 0 || o.window > 1024 || o.iters == 0) Die("window 1..1024, iters >= 1");
    if (o.stall_s < 0 || o.stall_s > 86400) Die("-t: 0 (no limit) to 86400 seconds");
    return o;
}

// The connection's private data, as tp_common's big-endian words: the
// client says what to run, the server answers with its buffer.
constexpr uint64_t kMagic = 0x7369777869626e63;  // "siwxibnc"
constexpr size_t kHelloWords = 5, kReplyWords = 3;
const char* const kModes[] = {"lat", "rate", "bw", "clat"};

template <size_t N>
uint32_t IndexOf(const char* const (&names)[N], const std::string& name) {
    return uint32_t(std::find(std::begin(names), std::end(names), name) - names);
}

// Server: the client's request decides mode, operation and sizes.
std::unique_ptr<Endpoint> Serve(tp_conn* c, rdma_event_channel* ec, rdma_cm_id* listen, Options& o,
                                PeerInfo& peer, int wait_ms) {
    uint64_t w[kHelloWords];
    // No limit on the wait for the client: the driver starts it later.
    if (!tp_take_request(ec, listen, c, kMagic, w, kHelloWords, -1)) Die("no connect request");
    peer = {w[1], uint32_t(w[2] >> 32), uint32_t(w[2])};
    uint32_t mode = uint32_t(w[4] >> 16), op = uint32_t(w[4] >> 8) & 0xff;
    if (mode >= std::size(kModes) || op >= std::size(kOps))
        Die("the client asks for an unknown mode or operation");
    o.bytes = peer.bytes;
    o.iters = uint32_t(w[3] >> 32);
    o.window = uint32_t(w[3]);
    o.mode = kModes[mode];
    o.op = kOps[op];
    o.events = w[4] & 1;
    uint32_t depth = o.window + 1;
    tp_qp_opts q = QpOpts(depth, o.events);
    if (!tp_setup_qp(c, &q)) Die("QP setup failed");
    auto ep = std::make_unique<Endpoint>(c, o.bytes, depth, o.stall_s);
    PeerInfo mine = ep->Info();
    uint64_t reply[kReplyWords] = {kMagic, mine.addr, uint64_t(mine.rkey) << 32};
    uint8_t pdata[sizeof(reply)];
    tp_pdata_put(pdata, reply, kReplyWords);
    if (!tp_accept(c, pdata, sizeof(pdata), 1, wait_ms)) Die("accept failed");
    return ep;
}

// Client: resolve, set up on the resolved device, then connect.
std::unique_ptr<Endpoint> Connect(tp_conn* c, rdma_event_channel* ec, const Options& o,
                                  PeerInfo& peer, int wait_ms) {
    if (!tp_resolve(c, ec, o.addr.c_str(), o.port, wait_ms)) Die("cannot reach " + o.addr);
    c->pd = ibv_alloc_pd(c->id->verbs);
    Check(c->pd, "ibv_alloc_pd");
    uint32_t depth = o.window + 1;
    tp_qp_opts q = QpOpts(depth, o.events);
    if (!tp_setup_qp(c, &q)) Die("QP setup failed");
    auto ep = std::make_unique<Endpoint>(c, o.bytes, depth, o.stall_s);
    PeerInfo mine = ep->Info();
    uint64_t hello[kHelloWords] = {
        kMagic, mine.addr, uint64_t(mine.rkey) << 32 | o.bytes, uint64_t(o.iters) << 32 | o.window,
        uint64_t(IndexOf(kModes, o.mode)) << 16 | IndexOf(kOps, o.op) << 8 | o.events};
    uint8_t pdata[sizeof(hello)];
    tp_pdata_put(pdata, hello, kHelloWords);
    if (!tp_connect_qp(c, pdata, sizeof(pdata), wait_ms)) Die("connect failed");
    uint64_t w[kReplyWords];
    if (!tp_pdata_get(c->peer_pdata, c->peer_pdata_len, w, kReplyWords) || w[0] != kMagic)
        Die("the server's accept carries no siwx-imm-bench private data");
    peer = {w[1], uint32_t(w[2] >> 32), o.bytes};
    return ep;
}

}  // namespace

int main(int argc, char** argv) {
    tp_prog = "siwx-imm-bench";
    Options o = Parse(argc, argv);
    // -t: each connection step's limit too (0: none)
    int wait_ms = o.stall_s ? o.stall_s * 1000 : -1;
    tp_conn c{};
    PeerInfo peer{};
    std::unique_ptr<Endpoint> ep;
    rdma_event_channel* ec = tp_channel();
    rdma_cm_id* listen = nullptr;
    if (o.server) {
        listen = tp_listen(ec, o.port);
        ep = Serve(&c, ec, listen, o, peer, wait_ms);
    } else {
        ep = Connect(&c, ec, o, peer, wait_ms);
    }
    if (o.mode == "lat")
        RunLatency(*ep, peer, o, !o.server);
    else if (o.mode == "rate")
        RunRate(*ep, peer, o, !o.server);
    else if (o.mode == "bw")
        RunBandwidth(*ep, peer, o, !o.server);
    else
        RunCompletionLatency(*ep, peer, o, !o.server);
    ep.reset();
    if (listen) rdma_destroy_id(listen);
    rdma_destroy_event_channel(ec);
    return 0;
}
