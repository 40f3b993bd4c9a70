// placeholder for layout
