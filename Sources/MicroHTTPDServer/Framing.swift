internal import CMicroHTTPD
import Foundation

/// What the headers say about the body's length. `problem` names an ambiguity (RFC 9112 §6.3):
/// Content-Length together with Transfer-Encoding, Content-Lengths that disagree, or a transfer
/// coding other than `chunked`; or a header line libmicrohttpd parsed that a proxy in front may
/// read otherwise (whitespace before a colon, a folded line: RFC 9112 §5.1, §5.2), as a
/// `Transfer-Encoding : chunked` or a folded `Transfer-Encoding` is to libmicrohttpd another
/// header, and the body framed by `Content-Length`. Header names must be lower-cased already.
struct Framing {
    var contentLength: String?
    /// Transfer-Encoding: chunked (the only coding accepted).
    var isChunked = false
    var problem: String?

    /// The framing of the request on `connection` (whose handler was given `method`).
    init(_ headers: [(name: String, value: String)], connection: OpaquePointer, method: UnsafePointer<CChar>?) {
        self.init(headers)
        switch CMicroHTTPD_header_line_problem(connection, method) {
        case 1: problem = "whitespace between a header name and its colon"
        case 2: problem = "a header line folded onto the next (obs-fold)"
        default: break
        }
    }

    init(_ headers: [(name: String, value: String)]) {
        var lengthsDisagree = false
        var codings = 0
        var otherCoding = false
        for header in headers {
            // Most headers are neither: their name's length says so without comparing it.
            let length = header.name.utf8.count
            guard length == 14 || length == 17 else { continue }
            switch header.name {
            case "content-length":
                if let contentLength, contentLength != header.value { lengthsDisagree = true }
                if contentLength == nil { contentLength = header.value }
            case "transfer-encoding":
                codings += 1
                if header.value.trimmingCharacters(in: .whitespaces).lowercased() != "chunked" { otherCoding = true }
            default:
                continue
            }
        }
        isChunked = codings > 0
        if codings > 0, contentLength != nil {
            problem = "both Content-Length and Transfer-Encoding"
        } else if lengthsDisagree {
            problem = "conflicting Content-Length headers"
        } else if codings > 1 || otherCoding {
            problem = "a Transfer-Encoding other than chunked"
        }
    }
}
