// Empty: the target only hosts the precompiled header (cmake/PrecompiledHeaders.cmake).
