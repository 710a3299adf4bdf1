/// A command that the page asks the inspector to send to an app: the body of a `POST /command`,
/// read and checked.
///
/// ```json
/// {"token":"…","session":2,"key":"4F0C…","store":"lists","command":"jump","to":12}
/// ```
///
/// `key`, when given, is the app's own id of its session (the `session` of its `hello`): a
/// command whose session is now another app's (the inspector was started again, and numbers its
/// sessions anew as their apps reconnect) is refused, never sent to that other app.
///
/// `jump` takes `to`, `skip` and `unskip` take `at` (the `n` of a line of the session),
/// `dispatch` takes `action` (any JSON value, as the log writes actions), `import` takes `lines`
/// (an array of log lines, each a JSON object), and `present`, `pause` and `resume` take
/// nothing more. Every number is checked before it is used, and every JSON value is checked
/// as a line is (a key written twice in one object is refused), then sent as it was written,
/// on one line.
struct SteerCommand: Sendable {
  /// The page's number of the session.
  let session: Int
  /// The app's own id of the session, when the page gave it: the session numbered ``session``
  /// must be that app's.
  let key: String?
  /// The label of the store it steers.
  let store: String
  /// `jump`, `present`, `skip`, `unskip`, `dispatch`, `pause`, `resume` or `import`.
  let kind: String
  /// The `n` of `jump`'s `to`, or of `skip`'s and `unskip`'s `at`.
  let number: Int?
  /// The JSON text of `dispatch`'s `action`, or of `import`'s `lines`, on one line.
  let payload: String?
  /// Each line of an `import`, as JSON text on one line.
  let importedLines: [String]

  /// The commands, and the field each one takes.
  static let kinds: [String: String?] = [
    "jump": "to", "skip": "at", "unskip": "at", "present": nil, "pause": nil, "resume": nil,
    "dispatch": "action", "import": "lines",
  ]
  /// The largest message to an app, its line break included.
  static let messageLimit = 16 << 20

  /// Reads the command from the fields of a request's body (see ``JSONScanner``).
  ///
  /// - Throws: An ``InspectorError`` that names the field that is missing or wrong.
  init(fields: [String: ArraySlice<UInt8>]) throws(InspectorError) {
    func string(_ key: String) -> String? {
      fields[key].flatMap { $0.count <= 1540 ? JSONScanner.string($0) : nil }
    }
    guard let kind = string("command"), let field = Self.kinds[kind] else {
      throw InspectorError(
        "command must be one of jump, present, skip, unskip, dispatch, pause, resume or import")
    }
    guard let session = fields["session"].flatMap(Self.number) else {
      throw InspectorError("session must be the number of a session, a whole number from 0 to 2^53 − 1")
    }
    guard let store = string("store"), (1...256).contains(store.utf8.count) else {
      throw InspectorError("store must be the label of a store, text of 1 to 256 bytes")
    }
    if let given = fields["key"] {
      guard let key = given.count <= 1540 ? JSONScanner.string(given) : nil, key.utf8.count <= 256 else {
        throw InspectorError("key must be the app's id of its session, text of at most 256 bytes")
      }
      self.key = key
    } else {
      key = nil
    }
    self.session = session
    self.store = store
    self.kind = kind
    var number: Int?
    var payload: String?
    var imported: [String] = []
    switch field {
    case "to", "at":
      guard let value = fields[field!].flatMap(Self.number) else {
        throw InspectorError("\(field!) must be the number of a line, a whole number from 0 to 2^53 − 1")
      }
      number = value
    case "action":
      guard let action = fields["action"] else { throw InspectorError("action is missing: type the action as JSON") }
      if let problem = StrictJSON.problem(in: action) {
        throw InspectorError("action is not JSON as a log's line must be: \(problem)")
      }
      payload = Self.oneLine(action)
    case "lines":
      guard let lines = fields["lines"], let elements = JSONScanner.elements(ofArray: lines) else {
        throw InspectorError("lines must be an array of the lines of a log, each a JSON object")
      }
      for (index, element) in elements.enumerated() {
        guard element.first == UInt8(ascii: "{") else {
          throw InspectorError("line \(index + 1) of the import is not a JSON object")
        }
        if let problem = StrictJSON.problem(in: element) {
          throw InspectorError("line \(index + 1) of the import: \(problem)")
        }
        imported.append(Self.oneLine(element))
      }
      payload = "[" + imported.joined(separator: ",") + "]"
    default:
      break
    }
    self.number = number
    self.payload = payload
    importedLines = imported
    guard message(id: Int(AppMessage.largestNumber)).utf8.count < Self.messageLimit else {
      throw InspectorError("the command is longer than the 16 MiB that one message may be")
    }
  }

  /// The message to the app.
  func message(id: Int) -> String {
    var text = "{\"type\":\"command\",\"id\":\(id),\"store\":\(JSONText.string(store)),\"command\":\"\(kind)\""
    if let number, let field = Self.kinds[kind] ?? nil { text += ",\"\(field)\":\(number)" }
    if let payload { text += kind == "import" ? ",\"lines\":\(payload)" : ",\"action\":\(payload)" }
    return text + "}"
  }

  /// The command as the timeline shows it: without the lines of an import, which follow it there
  /// once the app took them.
  func shown(id: Int) -> String {
    var text = "{\"id\":\(id),\"store\":\(JSONText.string(store)),\"command\":\"\(kind)\""
    if let number, let field = Self.kinds[kind] ?? nil { text += ",\"\(field)\":\(number)" }
    if kind == "dispatch", let payload {
      text += payload.utf8.count <= 65536 ? ",\"action\":\(payload)" : ",\"actionBytes\":\(payload.utf8.count)"
    }
    if kind == "import" { text += ",\"lines\":\(importedLines.count)" }
    return text + "}"
  }

  private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
    guard let value = decimal(Substring(decoding: bytes, as: UTF8.self)), value <= AppMessage.largestNumber else {
      return nil
    }
    return Int(value)
  }

  /// JSON text on one line: a line break can only be white space between its tokens (one in a
  /// string is written `\n`), so each becomes a space.
  private static func oneLine(_ bytes: ArraySlice<UInt8>) -> String {
    String(decoding: bytes.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }, as: UTF8.self)
  }
}

extension JSONScanner {
  /// The bytes of each element of `bytes`, a JSON array; `nil` when it is not one.
  static func elements(ofArray bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>]? {
    var scanner = JSONScanner(bytes)
    return try? scanner.arrayElements()
  }
}
