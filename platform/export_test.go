package platform

// For the external tests of this package: the builders of macOS's raw
// kinfo_proc records and procargs2 values.
var (
	MakeKinfo     = kinfo
	MakeProcargs2 = fakeProcargs2
)
