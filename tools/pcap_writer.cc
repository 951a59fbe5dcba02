#include "pcap_writer.h"

namespace siwx_tools {

namespace {

void Put16(std::vector<uint8_t>& v, uint16_t x) {
    v.push_back(uint8_t(x >> 8));
    v.push_back(uint8_t(x));
}

void Put32(std::vector<uint8_t>& v, uint32_t x) {
    Put16(v, uint16_t(x >> 16));
    Put16(v, uint16_t(x));
}

void PutLe32(FILE* f, uint32_t x) {
    uint8_t b[4] = {uint8_t(x), uint8_t(x >> 8), uint8_t(x >> 16), uint8_t(x >> 24)};
    std::fwrite(b, 1, 4, f);
}

void PutLe16(FILE* f, uint16_t x) {
    uint8_t b[2] = {uint8_t(x), uint8_t(x >> 8)};
    std::fwrite(b, 1, 2, f);
}

// RFC 1071 ones' complement sum.
uint16_t Checksum(const std::vector<uint8_t>& data, size_t from, size_t len, uint32_t sum = 0) {
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += uint32_t(data[from + i] << 8 | data[from + i + 1]);
    if (len % 2) sum += uint32_t(data[from + len - 1] << 8);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return uint16_t(~sum);
}

constexpr uint8_t kSyn = 0x02, kAck = 0x10, kPsh = 0x08;

}  // namespace

PcapWriter::PcapWriter(const std::string& path, uint16_t client_port, uint16_t server_port)
    : client_{0x0a000002, client_port, 1000}, server_{0x0a000001, server_port, 5000} {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) return;
    PutLe32(file_, 0xa1b2c3d4);  // microsecond timestamps
    PutLe16(file_, 2);
    PutLe16(file_, 4);
    PutLe32(file_, 0);
    PutLe32(file_, 0);
    PutLe32(file_, 65535);
    PutLe32(file_, 1);  // LINKTYPE_ETHERNET
    Segment(client_, server_, kSyn, {});
    client_.seq++;
    Segment(server_, client_, kSyn | kAck, {});
    server_.seq++;
    Segment(client_, server_, kAck, {});
}

PcapWriter::~PcapWriter() {
    if (file_) std::fclose(file_);
}

void PcapWriter::Send(bool from_client, const std::vector<uint8_t>& payload) {
    // Keep every segment below a 1500-octet MTU.
    for (size_t off = 0; off < payload.size(); off += 1400) {
        size_t n = std::min<size_t>(1400, payload.size() - off);
        std::vector<uint8_t> part(payload.begin() + long(off), payload.begin() + long(off + n));
        if (from_client)
            Segment(client_, server_, kAck | kPsh, part);
        else
            Segment(server_, client_, kAck | kPsh, part);
    }
}

void PcapWriter::Segment(Side& from, Side& to, uint8_t flags, const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> f;
    // Ethernet: locally administered MACs derived from the IPs.
    for (Side* s : {&to, &from}) {
        f.insert(f.end(), {0x02, 0x00});
        Put32(f, s->ip);
    }
    Put16(f, 0x0800);
    size_t ip = f.size();
    uint16_t total = uint16_t(20 + 20 + payload.size());
    f.insert(f.end(), {0x45, 0x00});
    Put16(f, total);
    Put32(f, 0x00004000);  // id 0, DF
    f.insert(f.end(), {64, 6, 0, 0});
    Put32(f, from.ip);
    Put32(f, to.ip);
    uint16_t ipsum = Checksum(f, ip, 20);
    f[ip + 10] = uint8_t(ipsum >> 8);
    f[ip + 11] = uint8_t(ipsum);
    size_t tcp = f.size();
    Put16(f, from.port);
    Put16(f, to.port);
    Put32(f, from.seq);
    Put32(f, (flags & kAck) ? to.seq : 0);
    f.push_back(0x50);
    f.push_back(flags);
    Put16(f, 65535);
    Put32(f, 0);  // checksum, urgent pointer
    f.insert(f.end(), payload.begin(), payload.end());
    uint32_t pseudo = (from.ip >> 16) + (from.ip & 0xffff) + (to.ip >> 16) + (to.ip & 0xffff) + 6 +
                      uint32_t(20 + payload.size());
    uint16_t tcpsum = Checksum(f, tcp, 20 + payload.size(), pseudo);
    f[tcp + 16] = uint8_t(tcpsum >> 8);
    f[tcp + 17] = uint8_t(tcpsum);
    from.seq += uint32_t(payload.size());
    Record(f);
}

void PcapWriter::Record(const std::vector<uint8_t>& frame) {
    usec_ += 100;
    PutLe32(file_, 1700000000 + usec_ / 1000000);
    PutLe32(file_, usec_ % 1000000);
    PutLe32(file_, uint32_t(frame.size()));
    PutLe32(file_, uint32_t(frame.size()));
    std::fwrite(frame.data(), 1, frame.size(), file_);
}

}  // namespace siwx_tools
