"""Cards: card issuing (products, cards, lifecycle, controls, PIN, limits).

The app is registered so that the layout of docs/design.md section 2 is in place; its models,
services and endpoints arrive with their own issue. Until then it exposes nothing.
"""
