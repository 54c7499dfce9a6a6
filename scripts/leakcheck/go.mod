module github.com/yermakovsa/failnext-blocklag/scripts/leakcheck

go 1.24
