// Writes a classic pcap file of one TCP connection between two IPv4 hosts,
// so that an independent decoder (tshark) can read what the protocol core
// puts on the wire. Each Send() is one TCP segment with correct sequence
// numbers and checksums.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace siwx_tools {

class PcapWriter {
  public:
    // Creates @path; the connection is opened with a three-way handshake.
    PcapWriter(const std::string& path, uint16_t client_port, uint16_t server_port);
    ~PcapWriter();
    PcapWriter(const PcapWriter&) = delete;
    PcapWriter& operator=(const PcapWriter&) = delete;

    bool ok() const { return file_ != nullptr; }
    // Payload from the client (initiator) or the server (responder).
    void Send(bool from_client, const std::vector<uint8_t>& payload);

  private:
    struct Side {
        uint32_t ip;
        uint16_t port;
        uint32_t seq;
    };
    void Segment(Side& from, Side& to, uint8_t flags, const std::vector<uint8_t>& payload);
    void Record(const std::vector<uint8_t>& frame);

    FILE* file_ = nullptr;
    Side client_;
    Side server_;
    uint32_t usec_ = 0;
};

}  // namespace siwx_tools
