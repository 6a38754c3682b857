package platform

// maxrssUnit is ru_maxrss's unit on macOS: bytes (getrusage(2)).
const maxrssUnit = 1
