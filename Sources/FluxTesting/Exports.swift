// The devtools (action log, replay, time travel) come with the test kit.
@_exported import FluxDevtools
