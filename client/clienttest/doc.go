// Package clienttest holds what the adapters' tests share: processes of a
// made-up table, and a scan of them with one adapter's marks and what it
// judges of a state dir.
package clienttest
