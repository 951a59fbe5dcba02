// MPA connection setup decisions: CRC, markers, IRD/ORD and RTR
// negotiation, from both ends, including against the Request and Reply
// frames an upstream siw peer sends (revision 2, enhanced, CRC off).
#include <gtest/gtest.h>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

siwx_mpa_policy Policy(bool p2p = false) {
    siwx_mpa_policy p{};
    p.crc = true;
    p.rev = 2;
    p.p2p = p2p;
    p.rtr_types = SIWX_MPA_RTR_WRITE | SIWX_MPA_RTR_READ;
    p.max_ird = 16;
    p.max_ord = 16;
    return p;
}

// Both ends through the wire encoding: what the peer decodes is what we sent.
siwx_mpa_rr ThroughWire(const siwx_mpa_rr& rr, Bytes& storage) {
    storage.resize(siwx_mpa_rr_len(&rr));
    EXPECT_EQ(siwx_mpa_rr_encode(&rr, storage.data()), storage.size());
    siwx_mpa_rr out;
    size_t len;
    siwx_term err;
    EXPECT_EQ(siwx_mpa_rr_decode(storage.data(), storage.size(), &out, &len, &err), SIWX_PARSE_OK);
    return out;
}

TEST(MpaNego, ClientServerRoundTrip) {
    siwx_mpa_policy pol = Policy();
    siwx_mpa_rr req;
    siwx_mpa_make_request(&pol, 4, 8, nullptr, 0, &req);
    Bytes w1, w2;
    siwx_mpa_rr req_in = ThroughWire(req, w1);

    siwx_mpa_conn server;
    siwx_term err{};
    ASSERT_TRUE(siwx_mpa_check_request(&pol, &req_in, &server, &err));
    EXPECT_TRUE(server.crc);
    EXPECT_EQ(server.ord, 4);  // the Initiator serves 4 Reads
    EXPECT_EQ(server.ird, 8);  // and issues up to 8
    siwx_mpa_rr rep;
    siwx_mpa_make_reply(&req_in, &server, true, 2, 16, nullptr, 0, &rep);
    EXPECT_EQ(server.ird, 8);  // never below what the Initiator's ORD needs
    EXPECT_EQ(server.ord, 4);  // never above the Initiator's IRD
    siwx_mpa_rr rep_in = ThroughWire(rep, w2);

    siwx_mpa_conn client;
    ASSERT_EQ(siwx_mpa_check_reply(&pol, &req, &rep_in, &client, &err), SIWX_MPA_ACCEPTED);
    EXPECT_TRUE(client.crc);
    EXPECT_EQ(client.ird, 4);
    EXPECT_EQ(client.ord, 8);
    EXPECT_EQ(client.rtr, 0);
}

TEST(MpaNego, CrcIsUsedIfEitherSideAsks) {
    siwx_mpa_policy no_crc = Policy();
    no_crc.crc = false;
    siwx_mpa_policy crc = Policy();
    siwx_mpa_rr req;
    siwx_mpa_conn conn;
    siwx_term err;
    siwx_mpa_make_request(&no_crc, 1, 1, nullptr, 0, &req);
    ASSERT_TRUE(siwx_mpa_check_request(&crc, &req, &conn, &err));
    EXPECT_TRUE(conn.crc);
    ASSERT_TRUE(siwx_mpa_check_request(&no_crc, &req, &conn, &err));
    EXPECT_FALSE(conn.crc);
    // A Reply dropping a requested CRC is a protocol error.
    siwx_mpa_make_request(&crc, 1, 1, nullptr, 0, &req);
    siwx_mpa_rr rep{};
    rep.reply = true;
    rep.rev = 2;
    rep.enhanced = true;
    EXPECT_EQ(siwx_mpa_check_reply(&crc, &req, &rep, &conn, &err), SIWX_MPA_INVALID);
    EXPECT_EQ(err, siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_INVALID_RR));
}

TEST(MpaNego, MarkersAreRefused) {
    siwx_mpa_policy pol = Policy();
    siwx_mpa_rr req;
    siwx_mpa_make_request(&pol, 1, 1, nullptr, 0, &req);
    req.markers = true;
    siwx_mpa_conn conn;
    siwx_term err;
    EXPECT_FALSE(siwx_mpa_check_request(&pol, &req, &conn, &err));
    req.markers = false;
    siwx_mpa_rr rep{};
    rep.reply = true;
    rep.rev = 2;
    rep.enhanced = true;
    rep.crc = true;
    rep.markers = true;
    EXPECT_EQ(siwx_mpa_check_reply(&pol, &req, &rep, &conn, &err), SIWX_MPA_INVALID);
}

TEST(MpaNego, PeerRejectIsReported) {
    siwx_mpa_policy pol = Policy();
    siwx_mpa_rr req;
    siwx_mpa_make_request(&pol, 1, 1, nullptr, 0, &req);
    siwx_mpa_conn server;
    siwx_term err;
    ASSERT_TRUE(siwx_mpa_check_request(&pol, &req, &server, &err));
    Bytes why = {'n', 'o'};
    siwx_mpa_rr rep;
    siwx_mpa_make_reply(&req, &server, false, 0, 0, why.data(), 2, &rep);
    Bytes w;
    siwx_mpa_rr rep_in = ThroughWire(rep, w);
    EXPECT_TRUE(rep_in.reject);
    EXPECT_EQ(Bytes(rep_in.pd, rep_in.pd + rep_in.pd_len), why);
    siwx_mpa_conn client;
    EXPECT_EQ(siwx_mpa_check_reply(&pol, &req, &rep_in, &client, &err), SIWX_MPA_REJECTED);
}

TEST(MpaNego, PeerToPeerPicksWriteThenRead) {
    siwx_mpa_policy pol = Policy(true);
    siwx_mpa_rr req;
    siwx_mpa_make_request(&pol, 1, 1, nullptr, 0, &req);
    EXPECT_TRUE(req.p2p);
    siwx_mpa_conn server;
    siwx_term err;
    ASSERT_TRUE(siwx_mpa_check_request(&pol, &req, &server, &err));
    EXPECT_EQ(server.rtr, SIWX_MPA_RTR_WRITE);
    req.rtr = SIWX_MPA_RTR_READ | SIWX_MPA_RTR_SEND;
    ASSERT_TRUE(siwx_mpa_check_request(&pol, &req, &server, &err));
    EXPECT_EQ(server.rtr, SIWX_MPA_RTR_READ);
    req.rtr = SIWX_MPA_RTR_SEND;  // we do not accept a Send RTR here
    EXPECT_FALSE(siwx_mpa_check_request(&pol, &req, &server, &err));
    EXPECT_EQ(err, siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_NO_MATCHING_RTR));
}

TEST(MpaNego, InitiatorChecksTheChosenRtr) {
    siwx_mpa_policy pol = Policy(true);
    pol.rtr_types = SIWX_MPA_RTR_READ;
    siwx_mpa_rr req;
    siwx_mpa_make_request(&pol, 1, 0, nullptr, 0, &req);
    EXPECT_EQ(req.ord, 1);  // a Read RTR needs one outbound Read
    siwx_mpa_rr rep{};
    rep.reply = true;
    rep.crc = true;
    rep.rev = 2;
    rep.enhanced = true;
    rep.p2p = true;
    rep.ird = 1;
    rep.ord = 1;
    rep.rtr = SIWX_MPA_RTR_WRITE;  // not offered
    siwx_mpa_conn conn;
    siwx_term err;
    EXPECT_EQ(siwx_mpa_check_reply(&pol, &req, &rep, &conn, &err), SIWX_MPA_INVALID);
    EXPECT_EQ(err.ecode, SIWX_LLP_NO_MATCHING_RTR);
    rep.rtr = SIWX_MPA_RTR_READ;
    EXPECT_EQ(siwx_mpa_check_reply(&pol, &req, &rep, &conn, &err), SIWX_MPA_ACCEPTED);
    EXPECT_EQ(conn.rtr, SIWX_MPA_RTR_READ);
}

// RFC 6581: the Initiator's first message is the RTR the Responder chose;
// nothing is placed or delivered for it.
TEST(MpaNego, RtrMessageHeaders) {
    siwx_ddp_hdr h;
    ASSERT_TRUE(siwx_mpa_rtr_hdr(SIWX_MPA_RTR_WRITE, 7, &h));
    EXPECT_EQ(h.opcode, SIWX_OP_WRITE);
    EXPECT_TRUE(h.tagged);
    EXPECT_TRUE(h.last);
    EXPECT_EQ(h.stag, 0u);
    EXPECT_EQ(h.to, 0u);
    ASSERT_TRUE(siwx_mpa_rtr_hdr(SIWX_MPA_RTR_SEND, 1, &h));
    EXPECT_EQ(h.opcode, SIWX_OP_SEND);
    EXPECT_FALSE(h.tagged);
    EXPECT_TRUE(h.last);
    EXPECT_EQ(h.qn, static_cast<u32>(SIWX_QN_SEND));
    EXPECT_EQ(h.msn, 1u);
    EXPECT_EQ(h.mo, 0u);
    // We never offer a Read RTR, so we cannot be asked to send one.
    EXPECT_FALSE(siwx_mpa_rtr_hdr(SIWX_MPA_RTR_READ, 1, &h));
    EXPECT_FALSE(siwx_mpa_rtr_hdr(SIWX_MPA_RTR_WRITE | SIWX_MPA_RTR_SEND, 1, &h));
}

// The first message an Initiator may send: each RTR type's header (a
// zero-length Write or Send, a Read Request), MSN 1.
struct FirstMessages {
    siwx_ddp_hdr write{}, send{}, read{};
    FirstMessages() {
        EXPECT_TRUE(siwx_mpa_rtr_hdr(SIWX_MPA_RTR_WRITE, 1, &write));
        EXPECT_TRUE(siwx_mpa_rtr_hdr(SIWX_MPA_RTR_SEND, 1, &send));
        read.opcode = SIWX_OP_READ_REQ;
        read.qn = SIWX_QN_READ;
        read.msn = 1;
        read.last = true;
    }
};

TEST(MpaNego, ResponderTakesOnlyTheAgreedRtr) {
    const siwx_term no_rtr =
        siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_NO_MATCHING_RTR);
    const FirstMessages m;
    const siwx_ddp_hdr &write = m.write, &send = m.send, &read = m.read;
    siwx_term err{};

    EXPECT_EQ(siwx_mpa_rtr_check(SIWX_MPA_RTR_WRITE, &write, 0, &err), SIWX_RTR_DISCARD);
    EXPECT_EQ(siwx_mpa_rtr_check(SIWX_MPA_RTR_SEND, &send, 0, &err), SIWX_RTR_DISCARD);
    EXPECT_EQ(siwx_mpa_rtr_check(SIWX_MPA_RTR_READ, &read, 0, &err), SIWX_RTR_SERVE);

    // The wrong type, or data where only a zero-length message may be.
    err = {};
    EXPECT_EQ(siwx_mpa_rtr_check(SIWX_MPA_RTR_WRITE, &send, 0, &err), SIWX_RTR_INVALID);
    EXPECT_EQ(err, no_rtr);
    err = {};
    EXPECT_EQ(siwx_mpa_rtr_check(SIWX_MPA_RTR_SEND, &read, 0, &err), SIWX_RTR_INVALID);
    EXPECT_EQ(err, no_rtr);
    err = {};
    EXPECT_EQ(siwx_mpa_rtr_check(SIWX_MPA_RTR_WRITE, &write, 1, &err), SIWX_RTR_INVALID);
    EXPECT_EQ(err, no_rtr);
    siwx_ddp_hdr first_of_many = send;
    first_of_many.last = false;
    EXPECT_EQ(siwx_mpa_rtr_check(SIWX_MPA_RTR_SEND, &first_of_many, 0, &err), SIWX_RTR_INVALID);
}

// Without peer-to-peer mode the Responder still waits for the Initiator's
// first FPDU (RFC 5044 7.1.2), whatever it is, and then processes it.
TEST(MpaNego, ResponderWithoutRtrTakesAnyFirstFpdu) {
    const FirstMessages m;
    const siwx_ddp_hdr &write = m.write, &send = m.send, &read = m.read;
    siwx_term err{};
    siwx_ddp_hdr big_send = send;
    big_send.last = false;

    EXPECT_EQ(siwx_mpa_rtr_check(0, &send, 100, &err), SIWX_RTR_SERVE);
    EXPECT_EQ(siwx_mpa_rtr_check(0, &big_send, 1000, &err), SIWX_RTR_SERVE);
    // A zero-length Write is data like any other here, not an RTR to drop.
    EXPECT_EQ(siwx_mpa_rtr_check(0, &write, 0, &err), SIWX_RTR_SERVE);
    EXPECT_EQ(siwx_mpa_rtr_check(0, &read, 0, &err), SIWX_RTR_SERVE);
    EXPECT_EQ(err, siwx_term{});
}

TEST(MpaNego, RelaxedIrdOrd) {
    siwx_mpa_policy pol = Policy();
    siwx_mpa_rr req;
    siwx_mpa_make_request(&pol, 2, 8, nullptr, 0, &req);
    siwx_mpa_rr rep{};
    rep.reply = true;
    rep.crc = true;
    rep.rev = 2;
    rep.enhanced = true;
    rep.ird = 3;  // serves only 3 of our 8 Reads: our ORD drops to 3
    rep.ord = 5;  // wants 5 of our 2: within our maximum, we serve 5
    siwx_mpa_conn conn;
    siwx_term err;
    ASSERT_EQ(siwx_mpa_check_reply(&pol, &req, &rep, &conn, &err), SIWX_MPA_ACCEPTED);
    EXPECT_EQ(conn.ord, 3);
    EXPECT_EQ(conn.ird, 5);
    rep.ord = 17;  // beyond what we can serve at all
    EXPECT_EQ(siwx_mpa_check_reply(&pol, &req, &rep, &conn, &err), SIWX_MPA_INVALID);
    EXPECT_EQ(err.ecode, SIWX_LLP_INSUFFICIENT_IRD);
}

TEST(MpaNego, Revision1HasNoEnhancedParameters) {
    siwx_mpa_policy pol = Policy();
    pol.rev = 1;
    siwx_mpa_rr req;
    siwx_mpa_make_request(&pol, 2, 3, nullptr, 0, &req);
    Bytes w;
    siwx_mpa_rr req_in = ThroughWire(req, w);
    EXPECT_EQ(w.size(), size_t(SIWX_MPA_RR_HDR_LEN));
    siwx_mpa_policy server_pol = Policy();
    siwx_mpa_conn server;
    siwx_term err;
    ASSERT_TRUE(siwx_mpa_check_request(&server_pol, &req_in, &server, &err));
    siwx_mpa_rr rep;
    siwx_mpa_make_reply(&req_in, &server, true, 2, 3, nullptr, 0, &rep);
    EXPECT_EQ(rep.rev, 1);
    EXPECT_FALSE(rep.enhanced);
    siwx_mpa_conn client;
    ASSERT_EQ(siwx_mpa_check_reply(&pol, &req, &rep, &client, &err), SIWX_MPA_ACCEPTED);
    EXPECT_EQ(client.ird, 2);
    EXPECT_EQ(client.ord, 3);
}

// The frames an upstream siw (Linux 6.1 defaults) sends: revision 2 with
// the enhanced bit, CRC off, IRD/ORD in the private data, and siw's own
// non-RFC bit 0x08 of the flags octet, which a receiver must ignore.
TEST(MpaNego, UpstreamSiwRequest) {
    Bytes frame =
        Cat({Bytes{'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R', 'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e'},
             Bytes{0x18, 0x02}, Be16(4 + 3), Be16(16), Be16(16), Bytes{1, 2, 3}});
    siwx_mpa_rr req;
    size_t len;
    siwx_term err;
    ASSERT_EQ(siwx_mpa_rr_decode(frame.data(), frame.size(), &req, &len, &err), SIWX_PARSE_OK);
    siwx_mpa_policy pol = Policy();
    siwx_mpa_conn conn;
    ASSERT_TRUE(siwx_mpa_check_request(&pol, &req, &conn, &err));
    EXPECT_TRUE(conn.crc);  // our policy asks for it; siw honours the reply's C bit
    EXPECT_EQ(conn.ird, 16);
    EXPECT_EQ(conn.ord, 16);
    EXPECT_EQ(req.pd_len, 3);
}

}  // namespace
