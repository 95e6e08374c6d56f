module hrsync/tools

go 1.26.8
