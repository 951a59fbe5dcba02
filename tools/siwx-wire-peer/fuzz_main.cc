// siwx-wire-fuzz: a wire fuzzer against siwx. Connection after
// connection to siwx-hostile-target -F (tests/progs/hostile_target.c), it
// completes the MPA exchange (session.cc), sends a stream of frames from
// fuzz_frames.cc that ends in one siwx must refuse, and judges what comes
// back (fuzz_judge.cc): valid responses to our requests only, a
// Terminate before siwx closes, the one the RFCs name when nothing but
// valid frames preceded it, nothing after it. The server checks its
// canary pages, QP and receives after each connection.
//
//   siwx-wire-fuzz [--seed S] [--frames N] [--conn-frames M] [--only-conn K]
//                  [--apart] [--port P] [--timeout S] HOST
//
// Same seed, same frames (for the same target addresses). On a failed
// verdict the failing connection's frames are printed as "REPRO-FRAME
// <hex>" lines, and --seed S --only-conn K sends that connection again.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_frames.h"
#include "fuzz_judge.h"
#include "hostile_proto.h"
#include "pdata.h"
#include "session.h"

namespace wirepeer {
namespace {

struct Options {
    std::string host;
    uint16_t port = SIWX_HP_PORT;
    int timeout_ms = 15000;
    uint64_t seed = 0x5157584655a2ull;
    uint64_t frames = 1000000;
    uint32_t conn_frames = 4000;
    int64_t only_conn = -1;
    bool apart = false;
};

constexpr uint16_t kRd = 4;                // our IRD and ORD (RFC 6581)
constexpr size_t kBatch = 16 * 1024;       // octets per send(): TCP packs them
constexpr size_t kDesyncFill = 68 * 1024;  // more than any MPA length frames

struct Totals {
    uint64_t frames = 0;
    uint64_t conns = 0;
    uint64_t responses = 0;
    uint64_t exact = 0;       // endings whose Terminate was checked field by field
    uint64_t peer_terms = 0;  // connections we ended with our own Terminate
    std::map<std::string, uint64_t> terms;
};

std::string CompactHex(const Bytes& b) {
    static const char kDigits[] = "0123456789abcdef";
    std::string s;
    s.reserve(2 * b.size());
    for (uint8_t c : b) {
        s += kDigits[c >> 4];
        s += kDigits[c & 15];
    }
    return s;
}

class Conn {
  public:
    Conn(const Options& o, uint64_t idx) : o_(o), idx_(idx) {}
    // One connection; false on a failed verdict (reported).
    bool Run(uint64_t max_body, Totals* tot);
    uint64_t sent() const { return sent_; }
    uint64_t responses() const { return judge_ ? judge_->responses() : 0; }

  private:
    bool Fail(const std::string& why);
    bool Flush();
    void Poll(int timeout_ms);

    const Options& o_;
    uint64_t idx_;
    Session s_;
    std::unique_ptr<ConnJudge> judge_;
    std::vector<FuzzFrame> frames_;
    size_t sent_ = 0;     // frames handed to TCP
    size_t batched_ = 0;  // frames in batch_
    Bytes batch_;
    bool closed_ = false;
    bool send_failed_ = false;
};

bool Conn::Fail(const std::string& why) {
    std::printf("FAIL conn %" PRIu64 ": %s\n", idx_, why.c_str());
    std::printf("REPRO seed 0x%" PRIx64 " conn %" PRIu64 ": %zu frames sent (--seed 0x%" PRIx64
                " --only-conn %" PRIu64 " sends them again)\n",
                o_.seed, idx_, sent_, o_.seed, idx_);
    for (size_t i = 0; i < sent_ && i < frames_.size(); i++)
        std::printf("REPRO-FRAME %s\n", CompactHex(frames_[i].fpdu).c_str());
    // siwx's side of the connection, as received, 1 KiB a line.
    const Bytes& r = judge_ ? judge_->received() : Bytes();
    for (size_t off = 0; off < r.size(); off += 1024) {
        const size_t n = std::min<size_t>(1024, r.size() - off);
        std::printf("REPRO-REPLY %s\n",
                    CompactHex(Bytes(r.begin() + long(off), r.begin() + long(off + n))).c_str());
    }
    return false;
}

bool Conn::Flush() {
    if (batch_.empty() || send_failed_) return !send_failed_;
    std::string err;
    // A reset while we send is siwx closing after its Terminate: what it
    // sent is still read below.
    if (!s_.Send(batch_, &err)) send_failed_ = true;
    if (!send_failed_) sent_ += batched_;
    batch_.clear();
    batched_ = 0;
    return !send_failed_;
}

// Read what siwx sent within @timeout_ms (0: only what is there).
void Conn::Poll(int timeout_ms) {
    uint8_t buf[16384];
    for (;;) {
        std::string err;
        const long n = s_.Recv(buf, sizeof(buf), timeout_ms, &err);
        if (n == -1) return;
        if (n <= 0) {
            closed_ = true;
            return;
        }
        judge_->Feed(buf, size_t(n));
        timeout_ms = 0;
    }
}

bool Conn::Run(uint64_t max_body, Totals* tot) {
    std::string err;
    Bytes rep_pd;
    const Bytes pd = Words({SIWX_HP_REQ_MAGIC, SIWX_HP_FUZZ_MAX_RECVS, SIWX_HP_FLAG_FUZZ, 0, 0});
    if (!s_.Connect(o_.host, o_.port, &err) || !s_.Mpa(pd, kRd, &rep_pd, &err))
        return Fail("setup: " + err);
    Target t;
    if (!ParseTarget(rep_pd, &t)) return Fail("the MPA Reply's private data is not the server's");
    const siwx_mpa_conn& mc = s_.conn();
    judge_ = std::make_unique<ConnJudge>(mc.crc);
    FuzzLimits lim;
    lim.frames = o_.conn_frames;
    lim.recvs = SIWX_HP_FUZZ_MAX_RECVS;
    lim.recv_len = SIWX_HP_FUZZ_RECV_LEN;
    lim.apart = o_.apart;
    FrameGen gen(ConnSeed(o_.seed, idx_), t, mc.crc, lim);
    frames_ = gen.Connection(max_body);

    bool maybe = false, desync = false, peer_term = false, stalled = false;
    for (const FuzzFrame& f : frames_) {
        if (f.on_qn1) {
            // RFC 6581: no more Read/Atomic Requests in flight than the
            // agreed ORD; wait for responses first.
            Flush();
            const auto start = std::chrono::steady_clock::now();
            while (judge_->outstanding() >= mc.ord && !closed_ && !judge_->terminated() &&
                   judge_->why().empty()) {
                Poll(100);
                if (std::chrono::steady_clock::now() - start >
                    std::chrono::milliseconds(o_.timeout_ms)) {
                    // A wrong MPA length may hold siwx's parser inside a
                    // frame: the rest goes after the filler below.
                    if (!desync) return Fail("no response to a Read/Atomic Request");
                    stalled = true;
                    break;
                }
            }
        }
        if (!judge_->why().empty() || closed_ || judge_->terminated() || send_failed_ || stalled)
            break;
        if (f.risk != Risk::kValid) judge_->Risky();
        maybe |= f.risk == Risk::kMaybe;
        desync |= f.desync;
        peer_term |= f.peer_term;
        judge_->Issued(f.req);
        batch_.insert(batch_.end(), f.fpdu.begin(), f.fpdu.end());
        batched_++;
        if (batch_.size() >= kBatch) {
            Flush();
            Poll(0);
        }
    }
    Flush();
    if (desync && !send_failed_) {
        // A wrong MPA length may still wait for octets: zeros complete it
        // and break its CRC (RFC 5044 section 8).
        batch_.assign(kDesyncFill, 0);
        Flush();
    }
    // siwx's Terminate, then its close.
    const auto start = std::chrono::steady_clock::now();
    while (!closed_ && judge_->why().empty()) {
        Poll(100);
        if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(o_.timeout_ms))
            break;
    }
    if (!judge_->why().empty()) return Fail(judge_->why());
    if (!closed_)
        return Fail(judge_->terminated() ? "siwx did not close the connection after its Terminate"
                                         : "no Terminate and no close within the time limit");
    if (!judge_->terminated()) {
        if (peer_term) {
            tot->peer_terms++;
            return true;
        }
        return Fail("siwx closed the connection without a Terminate");
    }
    const siwx_term_hdr& th = judge_->terminate().u.term;
    tot->terms[DescribeTerm(th.cause)]++;
    // Nothing but valid frames before the ending: its Terminate is known.
    const FuzzFrame& last = frames_.back();
    if (!maybe && last.exact && sent_ == frames_.size()) {
        const std::string j = Judge(last.expect, judge_->terminate());
        if (!j.empty())
            return Fail("wrong Terminate for the ending " + std::string(last.what) + ": " + j +
                        "; got " + Describe(judge_->terminate()) + "; want " +
                        Describe(last.expect));
        tot->exact++;
    }
    return true;
}

// The last connection tells the server to stop (no frames: it just ends).
bool Goodbye(const Options& o) {
    Session s;
    std::string err;
    Bytes rep_pd;
    const Bytes pd = Words({SIWX_HP_REQ_MAGIC, 0, SIWX_HP_FLAG_FUZZ | SIWX_HP_FLAG_LAST, 0, 0});
    if (!s.Connect(o.host, o.port, &err) || !s.Mpa(pd, kRd, &rep_pd, &err)) {
        std::printf("FAIL last connection: %s\n", err.c_str());
        return false;
    }
    return true;
}

void Usage(FILE* f) {
    std::fprintf(f,
                 "usage: siwx-wire-fuzz [--seed S] [--frames N] [--conn-frames M]\n"
                 "                      [--only-conn K] [--apart] [--port P] [--timeout S] HOST\n"
                 "--apart: Reads from the target's first half, Writes and atomics to\n"
                 "its second (no Read Response races a Write to its source)\n");
}

bool ParseNum(const char* s, uint64_t min, uint64_t max, uint64_t* v) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(s, &end, 0);
    if (errno || end == s || *end || *s == '-' || n < min || n > max) return false;
    *v = n;
    return true;
}

}  // namespace
}  // namespace wirepeer

int main(int argc, char** argv) {
    using namespace wirepeer;
    // Line by line: a guest that dies keeps what was printed.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Options o;
    std::vector<std::string> args;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            Usage(stdout);
            return 0;
        }
        if (a == "--apart") {
            o.apart = true;
            continue;
        }
        uint64_t v = 0;
        const bool has = i + 1 < argc;
        if (a == "--seed" && has && ParseNum(argv[i + 1], 0, UINT64_MAX, &v)) {
            o.seed = v;
        } else if (a == "--frames" && has && ParseNum(argv[i + 1], 1, 1ull << 40, &v)) {
            o.frames = v;
        } else if (a == "--conn-frames" && has && ParseNum(argv[i + 1], 1, 1000000, &v)) {
            o.conn_frames = uint32_t(v);
        } else if (a == "--only-conn" && has && ParseNum(argv[i + 1], 0, 1ull << 40, &v)) {
            o.only_conn = int64_t(v);
        } else if (a == "--port" && has && ParseNum(argv[i + 1], 1, 65535, &v)) {
            o.port = uint16_t(v);
        } else if (a == "--timeout" && has && ParseNum(argv[i + 1], 1, 3600, &v)) {
            o.timeout_ms = int(v * 1000);
        } else if (a.rfind("--", 0) == 0) {
            Usage(stderr);
            return 2;
        } else {
            args.push_back(a);
            continue;
        }
        i++;
    }
    if (args.size() != 1) {
        Usage(stderr);
        return 2;
    }
    o.host = args[0];
    std::printf("siwx-wire-fuzz: seed 0x%" PRIx64 ", %" PRIu64
                " frames, %u per connection on"
                " average, to %s port %u\n",
                o.seed, o.frames, o.conn_frames, o.host.c_str(), o.port);
    std::fflush(stdout);
    Totals tot;
    bool ok = true;
    const auto start = std::chrono::steady_clock::now();
    const uint64_t first = o.only_conn >= 0 ? uint64_t(o.only_conn) : 0;
    for (uint64_t idx = first; ok && tot.frames < o.frames; idx++) {
        Conn c(o, idx);
        ok = c.Run(o.only_conn >= 0 ? UINT64_MAX : o.frames - tot.frames, &tot);
        tot.frames += c.sent();
        tot.conns++;
        tot.responses += c.responses();
        if (o.only_conn >= 0) break;
    }
    ok = Goodbye(o) && ok;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("siwx-wire-fuzz: seed 0x%" PRIx64 ": %" PRIu64 " frames in %" PRIu64
                " connections, %" PRIu64 " responses received, %.1f s, %.0f frames/s\n",
                o.seed, tot.frames, tot.conns, tot.responses, secs,
                secs > 0 ? double(tot.frames) / secs : 0.0);
    std::printf("siwx-wire-fuzz: %" PRIu64 " Terminates checked field by field, %" PRIu64
                " connections ended by our own Terminate\n",
                tot.exact, tot.peer_terms);
    for (const auto& [name, n] : tot.terms)
        std::printf("siwx-wire-fuzz: Terminate %s: %" PRIu64 "\n", name.c_str(), n);
    std::printf("siwx-wire-fuzz: %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
