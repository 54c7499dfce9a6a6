module github.com/yermakovsa/failnext

go 1.24
