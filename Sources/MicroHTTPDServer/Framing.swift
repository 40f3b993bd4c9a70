import Foundation

/// What the headers say about the body's length. `problem` names an ambiguity (RFC 9112 §6.3):
/// Content-Length together with Transfer-Encoding, Content-Lengths that disagree, or a transfer
/// coding other than `chunked`. Header names must be lower-cased already.
struct Framing {
    var contentLength: String?
    /// Transfer-Encoding: chunked (the only coding accepted).
    var isChunked = false
    var problem: String?

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
