import NIOCore

/// A store as an app's `hello` or `stores` names it.
struct AppStore: Sendable, Equatable {
  /// Its label, which commands name.
  let label: String
  /// The name of its state's type.
  let state: String
  /// Whether the app lets the inspector steer it.
  let steerable: Bool

  /// The most stores one app names; the rest are not listed.
  static let limit = 1000

  /// The stores of a message's `stores` value, or `nil` when it is not an array of objects with a
  /// `label` that is text.
  static func list(_ value: Any?) -> [AppStore]? {
    guard let array = value as? [Any] else { return nil }
    var stores: [AppStore] = []
    for element in array.prefix(limit) {
      guard let object = element as? [String: Any], let label = object["label"] as? String,
        (1...256).contains(label.utf8.count)
      else { return nil }
      // At most 256 bytes: 64 scalars, not 256 characters, one of which may hold a million scalars.
      let state =
        (object["state"] as? String).map { String(String.UnicodeScalarView($0.unicodeScalars.prefix(64))) } ?? ""
      let steerable = (object["steerable"] as? Bool) ?? false
      if !stores.contains(where: { $0.label == label }) {
        stores.append(AppStore(label: label, state: state, steerable: steerable))
      }
    }
    return stores
  }

  /// The store as JSON text, for the page.
  var json: String {
    "{\"label\":\(JSONText.string(label)),\"state\":\(JSONText.string(state)),\"steerable\":\(steerable)}"
  }
}

/// What the inspector holds of one session of an app: the lines it sent (from a first one kept),
/// the gaps, the commands and their answers, in the order they came; who the app is; and the
/// connection it is on, while it is connected. Guarded by the lock of the ``LiveHub`` that holds
/// it: every property is read and written under that lock only.
final class LiveSession {
  /// The page's number for the session: 1, 2, 3… in the order sessions came.
  let id: Int
  /// The app's own id for its session: the same for every reconnect of one process.
  let key: String
  var app: String
  var pid: Int
  var platform: String
  var stores: [AppStore]
  /// The connection, while the app is connected.
  var connection: AppConnection?
  /// When the app last connected or went, as the log writes times.
  var since: String
  /// The number (`n`) of the next line the inspector waits for: every line before it was
  /// received, or reported as a gap.
  var next = 0
  /// The history: JSON objects as text, the first at index ``first``.
  private(set) var items: [String] = []
  private var start = 0
  /// The index of the first item kept.
  private(set) var first = 0
  private var bytes = 0
  /// Changes with every change of what the page shows above the timeline.
  var version = 0
  /// Whether the app said, by answering a command, that it pauses its lines.
  var isPaused = false
  /// The commands sent and not yet answered, by id.
  var pending: [Int: PendingCommand] = [:]
  var nextCommandID = 1

  /// The most items and bytes of items one session keeps: beyond, the oldest go.
  static let itemLimit = 100_000
  static let byteLimit = 64 << 20

  init(id: Int, key: String, app: String, pid: Int, platform: String, stores: [AppStore], since: String) {
    self.id = id
    self.key = key
    self.app = app
    self.pid = pid
    self.platform = platform
    self.stores = stores
    self.since = since
  }

  /// The index after the last item.
  var end: Int { first + items.count - start }

  /// Whether the app is connected now.
  var isLive: Bool { connection != nil }

  /// How many items it keeps, and their bytes.
  var itemCount: Int { items.count - start }
  var byteCount: Int { bytes }

  /// Adds `item` to the history, dropping the oldest items over the limits.
  func append(_ item: String) {
    items.append(item)
    bytes += item.utf8.count
    while itemCount > Self.itemLimit || (bytes > Self.byteLimit && itemCount > 1) {
      dropOldest()
    }
  }

  /// Drops the oldest item kept; returns its bytes.
  @discardableResult
  func dropOldest() -> Int {
    guard itemCount > 0 else { return 0 }
    let size = items[start].utf8.count
    bytes -= size
    items[start] = ""
    start += 1
    first += 1
    if start > 4096 && start * 2 > items.count {
      items.removeFirst(start)
      start = 0
    }
    return size
  }

  /// The items from index `from` on, at most `limit` of them and about `byteLimit` bytes.
  func slice(from: Int, limit: Int = .max, byteLimit: Int = .max) -> ArraySlice<String> {
    let lower = start + max(0, from - first)
    guard lower < items.count else { return [] }
    var upper = lower
    var size = 0
    while upper < items.count && upper - lower < limit && (size < byteLimit || upper == lower) {
      size += items[upper].utf8.count
      upper += 1
    }
    return items[lower..<upper]
  }

  /// The store labelled `label`.
  func store(_ label: String) -> AppStore? { stores.first { $0.label == label } }

  /// What the page shows of the session above its timeline, as JSON text.
  var metaJSON: String {
    var text = "{\"id\":\(id),\"kind\":\"app\",\"app\":\(JSONText.string(app)),\"session\":\(JSONText.string(key)),"
    text += "\"pid\":\(pid),\"platform\":\(JSONText.string(platform)),\"live\":\(isLive),\"paused\":\(isPaused),"
    text += "\"since\":\(JSONText.string(since)),\"lines\":\(next),\"first\":\(first),\"end\":\(end),"
    text += "\"version\":\(version),\"stores\":[" + stores.map(\.json).joined(separator: ",") + "]}"
    return text
  }
}

/// A command sent to an app, waiting for its answer.
struct PendingCommand {
  /// Its name: `jump`, `pause`, …
  let kind: String
  /// The command as the timeline shows it, JSON text.
  let shown: String
  /// The lines an `import` sends, shown in the history once the app took them.
  let imported: [String]
  /// Who waits for the answer.
  let continuation: CheckedContinuation<CommandOutcome, Never>
}

/// How a command ended: the app's answer, or why none came.
struct CommandOutcome: Sendable, Equatable {
  let ok: Bool
  /// The app's words for what it did, or why it could not; or the inspector's, when the app did
  /// not answer.
  let text: String
  /// The page's answer: the HTTP status and its JSON body.
  var json: String { "{\"ok\":\(ok),\"\(ok ? "outcome" : "error")\":\(JSONText.string(text))}" }
}

/// A connection of an app: its channel, and a number that tells it from an earlier connection of
/// the same session.
struct AppConnection: Sendable {
  let number: Int
  let channel: any Channel
  /// The app's address, for messages.
  let address: String
}
