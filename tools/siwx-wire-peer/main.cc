// siwx-wire-peer: a scripted, hostile iWARP peer. It connects to a siwx
// listener with a plain TCP socket (the server is
// tests/progs/hostile_target.c), does the MPA exchange through the
// protocol core, sends the FPDUs of one case per connection and decodes
// what comes back with the core's RX parser. It prints what it sent and
// received and exits 1 when any reply is not the one the RFCs call for.
//
//   siwx-wire-peer [--port P] [--timeout S] HOST CASE...   (or: all)
//   siwx-wire-peer --list
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cases.h"
#include "hostile_proto.h"
#include "pdata.h"
#include "session.h"

namespace wirepeer {
namespace {

struct Options {
    std::string host;
    uint16_t port = SIWX_HP_PORT;
    int timeout_ms = 15000;
    std::vector<std::string> cases;
};

constexpr uint16_t kRd = 4;  // our IRD and ORD (RFC 6581)

// Read the reply stream; true when it is what @e says.
bool Await(Session& s, const Expect& e, int timeout_ms, std::string* why) {
    ReplyReader reader(s.conn().crc);
    size_t seen = 0;
    bool matched = false;
    uint8_t buf[4096];
    for (;;) {
        std::string err;
        const long n = s.Recv(buf, sizeof(buf), timeout_ms, &err);
        if (n == -1) {
            if (matched && e.kind == Expect::Kind::kAtomicResponse) return true;
            *why = matched ? "the connection was not closed after the Terminate"
                           : "no reply within the time limit";
            return false;
        }
        if (n == -2) {
            // A reset after the Terminate is an abortive close: fine.
            if (matched) return true;
            *why = err;
            return false;
        }
        if (n == 0) {
            if (matched) return true;
            *why = "the connection was closed without the expected reply";
            return false;
        }
        std::printf("  received %ld octets: %s\n", n, Hex(buf, size_t(n > 64 ? 64 : n)).c_str());
        reader.Feed(buf, size_t(n));
        for (; seen < reader.messages().size(); seen++) {
            const siwx_rx_seg& m = reader.messages()[seen];
            std::printf("  received message: %s\n", Describe(m).c_str());
            if (matched) {
                *why = "a message after the expected reply";
                return false;
            }
            const std::string j = Judge(e, m);
            if (!j.empty()) {
                *why = j;
                return false;
            }
            matched = true;
            // After an Atomic Response the connection stays up.
            if (e.kind == Expect::Kind::kAtomicResponse) return true;
        }
        if (reader.broken()) {
            *why = "the reply is not a valid FPDU stream: " + DescribeTerm(reader.parse_error());
            return false;
        }
    }
}

bool RunCase(const Options& o, const Case& c) {
    std::printf("=== case %s: %s\n", c.name, c.summary);
    const Plan pre = c.build(Target{}, true);
    const Bytes pd = Words(
        {SIWX_HP_REQ_MAGIC, pre.recvs, pre.change ? SIWX_HP_FLAG_CHANGE : 0u, pre.word, pre.value});
    Session s;
    std::string err;
    Bytes rep_pd;
    if (!s.Connect(o.host, o.port, &err) || !s.Mpa(pd, kRd, &rep_pd, &err)) {
        std::printf("FAIL %s: %s\n", c.name, err.c_str());
        return false;
    }
    const siwx_mpa_conn& mc = s.conn();
    Target t;
    if (!ParseTarget(rep_pd, &t)) {
        std::printf("FAIL %s: the MPA Reply's private data is not the server's [%s]\n", c.name,
                    Hex(rep_pd).c_str());
        return false;
    }
    std::printf("  MPA rev %u crc %d ird %u ord %u; target 0x%" PRIx64
                " len %u rkey 0x%08x ro_rkey 0x%08x\n",
                mc.rev, mc.crc, mc.ird, mc.ord, t.addr, t.len, t.rkey, t.ro_rkey);
    const Plan p = c.build(t, mc.crc);
    if (!mc.crc && std::strncmp(c.name, "bad-crc", 7) == 0) {
        std::printf("FAIL %s: CRCs were not negotiated\n", c.name);
        return false;
    }
    std::printf("  send: %s\n", p.sent.c_str());
    for (const Bytes& f : p.fpdus) {
        std::printf("  sent FPDU (%zu octets): %s\n", f.size(), Hex(f).c_str());
        if (!s.Send(f, &err)) {
            std::printf("FAIL %s: %s\n", c.name, err.c_str());
            return false;
        }
    }
    std::printf("  expect: %s\n", Describe(p.expect).c_str());
    std::string why;
    if (!Await(s, p.expect, o.timeout_ms, &why)) {
        std::printf("FAIL %s: %s\n", c.name, why.c_str());
        return false;
    }
    std::printf("PASS %s\n", c.name);
    return true;
}

void Usage(FILE* f) {
    std::fprintf(f,
                 "usage: siwx-wire-peer [--port P] [--timeout S] HOST CASE... (or: all)\n"
                 "       siwx-wire-peer --list\n");
}

}  // namespace
}  // namespace wirepeer

int main(int argc, char** argv) {
    using namespace wirepeer;
    Options o;
    std::vector<std::string> args;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--list") {
            for (const Case& c : Cases()) std::printf("%-20s %s\n", c.name, c.summary);
            return 0;
        }
        if (a == "-h" || a == "--help") {
            Usage(stdout);
            return 0;
        }
        if ((a == "--port" || a == "--timeout") && i + 1 < argc) {
            const long v = std::strtol(argv[++i], nullptr, 10);
            if (v <= 0 || v > 65535) {
                Usage(stderr);
                return 2;
            }
            if (a == "--port")
                o.port = uint16_t(v);
            else
                o.timeout_ms = int(v * 1000);
            continue;
        }
        args.push_back(a);
    }
    if (args.size() < 2) {
        Usage(stderr);
        return 2;
    }
    o.host = args[0];
    for (size_t i = 1; i < args.size(); i++) {
        if (args[i] == "all") {
            for (const Case& c : Cases()) o.cases.push_back(c.name);
        } else if (FindCase(args[i])) {
            o.cases.push_back(args[i]);
        } else {
            std::fprintf(stderr, "siwx-wire-peer: unknown case '%s' (see --list)\n",
                         args[i].c_str());
            return 2;
        }
    }
    unsigned failed = 0;
    for (const std::string& name : o.cases) {
        if (!RunCase(o, *FindCase(name))) failed++;
        std::fflush(stdout);
    }
    std::printf("siwx-wire-peer: %zu cases, %u failed\n", o.cases.size(), failed);
    return failed ? 1 : 0;
}
