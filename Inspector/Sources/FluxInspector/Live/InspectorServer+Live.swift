import FluxDevtools
import HTTPTypes
import Hummingbird
import NIOCore

extension InspectorServer {
  /// The routes of the apps' live sessions:
  ///
  /// - `GET /live/sessions`: `{"file":PATH or null,"sessions":[…]}`, each session's facts (its app,
  ///   process, platform, stores, whether it is connected, how many lines it sent);
  /// - `GET /live/session?session=K`: session `K` whole, `{"session":{…},"first":F,"end":E,
  ///   "items":[…]}`: its lines (entries as ``LogLines`` makes them, numbered `n + 1`), gaps
  ///   (`{"gap":{…}}`), commands with their answers (`{"command":{…},"ack":{…}}`) and imported
  ///   lines (`{"imported":K,"raw":…}`), items `F` to `E − 1`;
  /// - `GET /live/events?session=K&from=E&version=V`: server-sent events: `items` with the items
  ///   from `E` on and the session's facts, when either changed; `reset` when the items the page
  ///   needs next are no longer kept, and it loads the session anew;
  /// - `POST /command`: a ``SteerCommand`` from the inspector's own page only (``PageAccess``),
  ///   sent to the app; the answer is the app's `ack`, `{"ok":true,"outcome":"…"}` or
  ///   `{"ok":false,"error":"…"}`;
  /// - `GET /live/session-test.swift?session=K`: the Swift Testing file of session `K`'s lines
  ///   (``SessionTestExport/test(lines:source:name:stateChecks:)``), what the page's "Export as
  ///   test" downloads for a live session.
  func addLiveRoutes(to router: Router<BasicRequestContext>, hub: LiveHub, page: PageAccess, logPath: String?) {
    let json = "application/json"
    let plain = "text/plain; charset=utf-8"
    router.get("/live/sessions") { _, _ in
      Self.text(hub.sessionsJSON(file: logPath), type: json)
    }
    router.get("/live/session") { request, _ in
      let query: LiveQuery
      do throws(InspectorError) {
        query = try LiveQuery(request.uri.query, names: ["session"])
      } catch {
        return Self.text(error.message, type: plain, status: .badRequest)
      }
      guard let document = hub.document(query["session"]) else {
        return Self.text("no session \(query["session"]): it is gone, or never was", type: plain, status: .notFound)
      }
      return Self.text(document, type: json)
    }
    router.get("/live/session-test.swift") { request, _ in
      let query: LiveQuery
      do throws(InspectorError) {
        query = try LiveQuery(request.uri.query, names: ["session"])
      } catch {
        return Self.text(error.message, type: plain, status: .badRequest)
      }
      let id = query["session"]
      // Reading and checking many lines takes a while: not on a thread that answers requests.
      let test = await FileWork.run { () -> Result<SessionTest, InspectorError>? in
        guard let held = hub.logLines(id) else { return nil }
        return Result { () throws(InspectorError) in
          try SessionTestExport.test(lines: held.lines, source: "the live session of \(held.app)")
        }
      }
      switch test {
      case nil:
        return Self.text("no session \(id): it is gone, or never was", type: plain, status: .notFound)
      case .success(let test):
        var response = Self.text(test.text, type: "text/x-swift; charset=utf-8")
        response.headers[.contentDisposition] = "attachment; filename=\"\(SessionTestExport.downloadName)\""
        return response
      case .failure(let error):
        return Self.text(error.message, type: plain, status: .unprocessableContent)
      }
    }
    router.get("/live/events") { request, _ in
      let query: LiveQuery
      do throws(InspectorError) {
        query = try LiveQuery(request.uri.query, names: ["session", "from", "version"])
      } catch {
        return Self.text(error.message, type: plain, status: .badRequest)
      }
      return Self.eventStream { stop, send in
        try await send("retry: 1000\n\n")
        var from = query["from"]
        var version = query["version"]
        var quiet: Duration = .zero
        while !Task.isCancelled && !stop.isRaised {
          switch hub.update(query["session"], from: from, version: version) {
          case .none:
            break
          case .items(let text, let end, let now):
            try await send("event: items\ndata: \(text)\n\n")
            from = end
            version = now
            quiet = .zero
            // More may wait: it goes at once, and the page takes it as fast as it reads.
            continue
          case .reset(let reason):
            try await send("event: reset\ndata: \(JSONText.string(reason))\n\n")
            return
          }
          if quiet >= LogEvents.keepAlive {
            try await send(": still here\n\n")
            quiet = .zero
          }
          try await Task.sleep(for: .milliseconds(50))
          quiet += .milliseconds(50)
        }
      }
    }
    router.post("/command") { request, _ in
      if let refusal = page.refusal(of: request) { return page.refuse(request, refusal) }
      var request = request
      let body = Array(try await request.collectBody(upTo: SteerCommand.messageLimit + (1 << 20)).readableBytesView)
      guard String(validating: body, as: UTF8.self) != nil else {
        return Self.text("the command is not UTF-8 text", type: plain, status: .badRequest)
      }
      let fields: [String: ArraySlice<UInt8>]
      do throws(InspectorError) {
        var scanner = JSONScanner(body[...])
        fields = try scanner.topLevelObject()
      } catch {
        return Self.text(
          error.message.replacingOccurrences(of: "a message", with: "the command"), type: plain, status: .badRequest)
      }
      guard let token = fields["token"].flatMap({ $0.count <= 256 ? JSONScanner.string($0) : nil }), page.isToken(token)
      else {
        return page.refuse(request, fields["token"] == nil ? "it has no token" : "its token is not this run's")
      }
      let command: SteerCommand
      do throws(InspectorError) {
        command = try SteerCommand(fields: fields)
      } catch {
        return Self.text(error.message, type: plain, status: .badRequest)
      }
      return Self.text(await hub.send(command).json, type: json)
    }
  }
}

/// The numbers of a query of the live routes (`session=2&from=10`): each name once, each value a
/// whole number from 0 to 2^53 − 1 in decimal digits, read before anything counts with it.
struct LiveQuery {
  private let values: [String: Int]

  /// Reads the query of the request, without its `?`.
  ///
  /// - Throws: An ``InspectorError`` that names the part that is missing or wrong.
  init(_ query: String?, names: [String]) throws(InspectorError) {
    var values: [String: Int] = [:]
    var seen: Set<Substring> = []
    for part in (query ?? "").split(separator: "&") {
      let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard names.contains(String(pair[0])) else { continue }
      guard seen.insert(pair[0]).inserted else { throw InspectorError("\(pair[0]) is given twice: give it once") }
      let text = pair.count == 2 ? pair[1] : ""
      guard let number = decimal(text), number <= AppMessage.largestNumber else {
        let shown = text.count > 40 ? text.prefix(40) + "…" : text
        throw InspectorError(
          "\(pair[0]) must be a whole number from 0 to \(AppMessage.largestNumber), not \"\(shown)\"")
      }
      values[String(pair[0])] = Int(number)
    }
    for name in names where values[name] == nil {
      throw InspectorError(
        "\(name) is missing: ask for /live/events?session=K&from=E&version=V as /live/session gives them")
    }
    self.values = values
  }

  subscript(name: String) -> Int { values[name] ?? 0 }
}
