// siwx-wire-demo: both ends of an RFC 7306 exchange run through the
// protocol core in this one process (no kernel, no network): MPA v2 setup,
// RDMA Write followed by Immediate Data, FetchAdd, masked FetchAdd and
// CmpSwap executed by a simulated responder against a 64-bit word. Prints
// a transcript and, with --pcap FILE, writes the bytes as one TCP
// connection for tshark to decode independently.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "pcap_writer.h"

extern "C" {
#include <siwx/proto/mpa.h>
#include <siwx/proto/rdmap.h>
#include <siwx/proto/rfc7306.h>
#include <siwx/proto/rx.h>
#include <siwx/proto/tx.h>
}

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kMulpdu = 1454;  // an Ethernet path: EMSS 1460
constexpr uint32_t kSinkStag = 0x00001234;
constexpr uint64_t kWriteTo = 0x1000;
constexpr uint64_t kCounterTo = 0x2000;

struct Peer {
    const char* name;
    siwx_rx rx{};
    uint32_t msn[SIWX_QN_COUNT] = {1, 1, 1, 1};
};

Bytes Frame(Peer& from, const siwx_ddp_hdr& h, const Bytes& rdmap_hdr, const Bytes& payload) {
    siwx_ddp_hdr hdr = h;
    if (!hdr.tagged) hdr.msn = from.msn[hdr.qn]++;
    siwx_tx_msg m;
    siwx_tx_msg_init(&m, &hdr, rdmap_hdr.empty() ? nullptr : rdmap_hdr.data(),
                     uint32_t(rdmap_hdr.size()), uint32_t(payload.size()));
    Bytes out;
    siwx_tx_seg s;
    while (siwx_tx_next(&m, kMulpdu, &s)) {
        Bytes fpdu(siwx_mpa_fpdu_len(s.ulpdu_len));
        siwx_tx_fpdu(&s, payload.data(), true, fpdu.data());
        out.insert(out.end(), fpdu.begin(), fpdu.end());
    }
    return out;
}

siwx_ddp_hdr Untagged(uint8_t op, uint32_t qn) {
    siwx_ddp_hdr h{};
    h.opcode = op;
    h.qn = qn;
    return h;
}

// What a receiver took from a stream: every complete message, in order.
struct Received {
    std::vector<siwx_rx_seg> headers;  // the last segment of each message
    std::vector<Bytes> payloads;
    bool ok = true;
    siwx_term term{};
};

Received Receive(Peer& to, const Bytes& wire) {
    Received r;
    Bytes cur;
    size_t used = 0;
    while (used < wire.size()) {
        siwx_rx_event ev;
        used += siwx_rx_feed(&to.rx, wire.data() + used, wire.size() - used, &ev);
        if (ev.type == SIWX_RX_PAYLOAD) cur.insert(cur.end(), ev.data, ev.data + ev.len);
        if (ev.type == SIWX_RX_SEGMENT_END && to.rx.seg.ddp.last) {
            r.headers.push_back(to.rx.seg);
            r.payloads.push_back(cur);
            cur.clear();
        }
        if (ev.type == SIWX_RX_ERROR) {
            r.ok = false;
            r.term = to.rx.term;
            break;
        }
    }
    return r;
}

const char* OpName(uint8_t op) {
    static const char* names[] = {"RDMA Write",
                                  "RDMA Read Request",
                                  "RDMA Read Response",
                                  "Send",
                                  "Send with Invalidate",
                                  "Send with SE",
                                  "Send with SE and Invalidate",
                                  "Terminate",
                                  "Immediate Data",
                                  "Immediate Data with SE",
                                  "Atomic Request",
                                  "Atomic Response"};
    return op < SIWX_OP_COUNT ? names[op] : "?";
}

struct Demo {
    Peer client{"client", {}, {1, 1, 1, 1}};
    Peer server{"server", {}, {1, 1, 1, 1}};
    siwx_tools::PcapWriter* pcap = nullptr;
    uint64_t counter = 40;  // the responder's registered 64-bit word
    Bytes sink = Bytes(4096, 0);
    bool ok = true;

    void Wire(bool from_client, const Bytes& bytes) {
        if (pcap) pcap->Send(from_client, bytes);
    }

    void Fail(const char* what) {
        std::printf("  FAILED: %s\n", what);
        ok = false;
    }

    // The responder side: place writes, report immediates, execute atomics.
    void Serve(const Received& got) {
        for (size_t i = 0; i < got.headers.size(); ++i) {
            const siwx_rx_seg& s = got.headers[i];
            std::printf("  server <- %-22s", OpName(s.ddp.opcode));
            if (s.ddp.opcode == SIWX_OP_WRITE) {
                // Every segment of a write places at its own TO; the
                // demo's sink is one flat buffer starting at kWriteTo.
                std::printf(" %zu octets at STag 0x%x\n", got.payloads[i].size(), s.ddp.stag);
            } else if (s.ddp.opcode == SIWX_OP_IMM || s.ddp.opcode == SIWX_OP_IMM_SE) {
                std::printf(" imm 0x%02x%02x%02x%02x (%02x%02x%02x%02x)\n", s.u.imm[0], s.u.imm[1],
                            s.u.imm[2], s.u.imm[3], s.u.imm[4], s.u.imm[5], s.u.imm[6], s.u.imm[7]);
            } else if (s.ddp.opcode == SIWX_OP_ATOMIC_REQ) {
                const siwx_atomic_req& a = s.u.atomic;
                uint64_t before = counter;
                counter = siwx_atomic_apply(&a, counter);
                std::printf(" %s id %u: 0x%" PRIx64 " -> 0x%" PRIx64 "\n",
                            a.aopcode == SIWX_AOP_FETCH_ADD ? "FetchAdd" : "CmpSwap", a.req_id,
                            before, counter);
                siwx_atomic_resp resp{a.req_id, before};
                Bytes hdr(SIWX_ATOMIC_RESP_LEN);
                siwx_atomic_resp_encode(&resp, hdr.data());
                Bytes bytes =
                    Frame(server, Untagged(SIWX_OP_ATOMIC_RESP, SIWX_QN_ATOMIC_RESP), hdr, {});
                Wire(false, bytes);
                Received back = Receive(client, bytes);
                if (!back.ok || back.headers.size() != 1) return Fail("atomic response");
                const siwx_atomic_resp& r = back.headers[0].u.atomic_resp;
                std::printf("  client <- Atomic Response        id %u: original 0x%" PRIx64 "\n",
                            r.req_id, r.orig);
                if (r.req_id != a.req_id || r.orig != before) Fail("atomic response fields");
            } else {
                std::printf("\n");
            }
        }
    }

    void Send(const Bytes& bytes) {
        Wire(true, bytes);
        Received got = Receive(server, bytes);
        if (!got.ok) {
            std::printf("  server refused: layer %u etype %u code 0x%02x\n", got.term.layer,
                        got.term.etype, got.term.ecode);
            return Fail("receive");
        }
        Serve(got);
    }

    void Atomic(const siwx_atomic_req& a) {
        Bytes hdr(SIWX_ATOMIC_REQ_LEN);
        siwx_atomic_req_encode(&a, hdr.data());
        Send(Frame(client, Untagged(SIWX_OP_ATOMIC_REQ, SIWX_QN_READ), hdr, {}));
    }

    void Connect() {
        siwx_mpa_rr req{};
        req.crc = true;
        req.rev = 2;
        req.enhanced = true;
        req.rtr = SIWX_MPA_RTR_WRITE;
        req.ird = req.ord = 16;
        Bytes frame(siwx_mpa_rr_len(&req));
        siwx_mpa_rr_encode(&req, frame.data());
        Wire(true, frame);
        siwx_mpa_rr rep = req;
        rep.reply = true;
        Bytes reply(siwx_mpa_rr_len(&rep));
        siwx_mpa_rr_encode(&rep, reply.data());
        Wire(false, reply);
        std::printf("MPA revision 2, CRC on, IRD/ORD 16 (RFC 5044, RFC 6581)\n");
        siwx_rx_init(&client.rx, true);
        siwx_rx_init(&server.rx, true);
    }
};

}  // namespace

int main(int argc, char** argv) {
    std::string pcap_path;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--pcap") && i + 1 < argc) {
            pcap_path = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--pcap FILE]\n", argv[0]);
            return 2;
        }
    }
    std::printf(
        "siwx protocol core demo: requester and responder simulated in one process.\n"
        "(This exercises the wire formats only; it is not an RDMA device.)\n\n");
    Demo d;
    siwx_tools::PcapWriter* writer = nullptr;
    if (!pcap_path.empty()) {
        writer = new siwx_tools::PcapWriter(pcap_path, 40000, 7306);
        if (!writer->ok()) {
            std::perror(pcap_path.c_str());
            return 1;
        }
        d.pcap = writer;
    }
    d.Connect();

    std::printf("\nRDMA Write with Immediate = RDMA Write + Immediate Data (RFC 7306 6):\n");
    Bytes data(3000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 13);
    siwx_ddp_hdr w{};
    w.opcode = SIWX_OP_WRITE;
    w.tagged = true;
    w.stag = kSinkStag;
    w.to = kWriteTo;
    Bytes imm = {0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0};
    d.Send(Frame(d.client, w, {}, data));
    d.Send(Frame(d.client, Untagged(SIWX_OP_IMM_SE, SIWX_QN_SEND), imm, {}));

    std::printf("\nAtomics on a 64-bit word holding 40 (RFC 7306 5):\n");
    siwx_atomic_req a;
    siwx_atomic_req_fetch_add(&a, 1, kSinkStag, kCounterTo, 2, 0);
    d.Atomic(a);
    siwx_atomic_req_fetch_add(&a, 2, kSinkStag, kCounterTo, 0x0000000100000001ULL,
                              0x8000000080000000ULL);
    d.Atomic(a);
    siwx_atomic_req_cmp_swap(&a, 3, kSinkStag, kCounterTo, 0x000000010000002bULL, ~0ULL, 7306,
                             ~0ULL);
    d.Atomic(a);
    bool counter_ok = d.counter == 7306;
    std::printf("\nfinal word: %" PRIu64 " (%s)\n", d.counter,
                counter_ok ? "as expected" : "WRONG");
    delete writer;
    if (!pcap_path.empty()) std::printf("capture written to %s\n", pcap_path.c_str());
    return d.ok && counter_ok ? 0 : 1;
}
