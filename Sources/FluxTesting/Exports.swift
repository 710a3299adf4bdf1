// A test file that imports the test kit can name `Store`, `Actions` and the rest of FluxCore
// without importing it: the test target need not depend on FluxCore itself.
@_exported import FluxCore
// The devtools (action log, replay, time travel) come with the test kit.
@_exported import FluxDevtools
