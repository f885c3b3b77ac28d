"""Local models on the CPU through llama.cpp, with grammar-constrained steps."""
