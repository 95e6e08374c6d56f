// Package image holds the Containerfile CI builds hrsync's image from
// without a registry (`make image`, tools/image.sh), and the tests that
// build that image, compare it with the Dockerfile, and run it read-only
// as user 65532 against the platform's emulator.
package image
